import { Module } from '@nestjs/common';
import { DynamicActionsController } from './dynamic-actions.controller';
import { DynamicActionsService } from './dynamic-actions.service';

/** `/v2/dynamic_actions`: actions whose implementation is a class of a code source (docs/workflow-dynamic-actions.md). */
@Module({
  controllers: [DynamicActionsController],
  providers: [DynamicActionsService],
})
export class DynamicActionsModule {}
