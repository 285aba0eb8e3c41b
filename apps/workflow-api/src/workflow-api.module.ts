import { Module } from '@nestjs/common';
import { ActionsModule } from './actions/actions.module';
import { CodeSourcesModule } from './code-sources/code-sources.module';
import { CronTriggersModule } from './cron-triggers/cron-triggers.module';
import { DynamicActionsModule } from './dynamic-actions/dynamic-actions.module';
import { EnvironmentsModule } from './environments/environments.module';
import { EventTriggersModule } from './event-triggers/event-triggers.module';
import { ExecutionsModule } from './executions/executions.module';
import { MembersModule } from './members/members.module';
import { WorkflowPolicyModule } from './policy/authorize';
import { RootController } from './root/root.controller';
import { WorkbooksModule } from './workbooks/workbooks.module';
import { WorkflowsModule } from './workflows/workflows.module';

@Module({
  imports: [
    WorkflowPolicyModule,
    WorkflowsModule,
    MembersModule,
    WorkbooksModule,
    ActionsModule,
    ExecutionsModule,
    CronTriggersModule,
    EventTriggersModule,
    EnvironmentsModule,
    CodeSourcesModule,
    DynamicActionsModule,
  ],
  controllers: [RootController],
})
export class WorkflowApiModule {}
