import { Module } from '@nestjs/common';
import { ActionsModule } from './actions/actions.module';
import { CronTriggersModule } from './cron-triggers/cron-triggers.module';
import { ExecutionsModule } from './executions/executions.module';
import { RootController } from './root/root.controller';
import { WorkbooksModule } from './workbooks/workbooks.module';
import { WorkflowsModule } from './workflows/workflows.module';

@Module({ imports: [WorkflowsModule, WorkbooksModule, ActionsModule, ExecutionsModule, CronTriggersModule], controllers: [RootController] })
export class WorkflowApiModule {}
