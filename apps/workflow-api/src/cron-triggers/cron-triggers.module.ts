import { Module } from '@nestjs/common';
import { WorkflowsModule } from '../workflows/workflows.module';
import { CronTriggersController } from './cron-triggers.controller';
import { CronTriggersDeleteGuard } from './cron-triggers.guard';
import { CronTriggersService } from './cron-triggers.service';

/** `/v2/cron_triggers`; also keeps workflows that triggers start from being deleted. */
@Module({
  imports: [WorkflowsModule],
  controllers: [CronTriggersController],
  providers: [CronTriggersService, CronTriggersDeleteGuard],
})
export class CronTriggersModule {}
