import { Module } from '@nestjs/common';
import { ActionExecutionsController } from '../action-executions/action-executions.controller';
import { ActionExecutionsService } from '../action-executions/action-executions.service';
import { TasksController } from '../tasks/tasks.controller';
import { TasksService } from '../tasks/tasks.service';
import { ExecutionEventHub } from './execution-event-hub';
import { ExecutionEventsController } from './execution-events.controller';
import { ExecutionStateStream } from './execution-state-stream';
import { ExecutionsController } from './executions.controller';
import { ExecutionsService } from './executions.service';
import { ExpressionPlaygroundController } from './expression-playground.controller';
import { ExpressionPlaygroundService } from './expression-playground.service';

/** Run-time resources: executions, tasks and action executions (one module: they reference each other). */
@Module({
  controllers: [
    ExecutionsController,
    ExecutionEventsController,
    ExpressionPlaygroundController,
    TasksController,
    ActionExecutionsController,
  ],
  providers: [
    ExecutionsService,
    TasksService,
    ActionExecutionsService,
    ExecutionEventHub,
    ExecutionStateStream,
    ExpressionPlaygroundService,
  ],
  exports: [ExecutionsService, TasksService, ActionExecutionsService],
})
export class ExecutionsModule {}
