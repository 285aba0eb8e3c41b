import { Module } from '@nestjs/common';
import { ActionsModule } from './actions/actions.module';
import { ExecutionsModule } from './executions/executions.module';
import { RootController } from './root/root.controller';
import { WorkbooksModule } from './workbooks/workbooks.module';
import { WorkflowsModule } from './workflows/workflows.module';

@Module({ imports: [WorkflowsModule, WorkbooksModule, ActionsModule, ExecutionsModule], controllers: [RootController] })
export class WorkflowApiModule {}
