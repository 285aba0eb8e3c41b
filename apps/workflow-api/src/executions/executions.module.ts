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

/** Run-time resources: executions, tasks and action executions (one module: they reference each other). */
@Module({
  controllers: [ExecutionsController, ExecutionEventsController, TasksController, ActionExecutionsController],
  providers: [ExecutionsService, TasksService, ActionExecutionsService, ExecutionEventHub, ExecutionStateStream],
  exports: [ExecutionsService, TasksService, ActionExecutionsService],
})
export class ExecutionsModule {}
