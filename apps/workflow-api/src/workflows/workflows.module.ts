import { Module } from '@nestjs/common';
import { WorkflowDeleteGuards } from './workflow-delete-guards';
import { WorkflowsController } from './workflows.controller';
import { WorkflowsService } from './workflows.service';

@Module({
  controllers: [WorkflowsController],
  providers: [WorkflowsService, WorkflowDeleteGuards],
  exports: [WorkflowsService, WorkflowDeleteGuards],
})
export class WorkflowsModule {}
