import { Module } from '@nestjs/common';
import { WorkflowsModule } from '../workflows/workflows.module';
import { EventTriggersController } from './event-triggers.controller';
import { EventTriggersDeleteGuard } from './event-triggers.guard';
import { EventTriggersService } from './event-triggers.service';

/**
 * `/v2/event_triggers`; also keeps workflows that triggers start from being deleted. The triggers fire
 * in cron-scheduler's notification listener (docs/event-triggers.md).
 */
@Module({
  imports: [WorkflowsModule],
  controllers: [EventTriggersController],
  providers: [EventTriggersService, EventTriggersDeleteGuard],
})
export class EventTriggersModule {}
