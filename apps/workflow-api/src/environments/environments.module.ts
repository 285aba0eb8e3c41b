import { Module } from '@nestjs/common';
import { EnvironmentsController } from './environments.controller';
import { EnvironmentsService } from './environments.service';

/** `/v2/environments`. Executions and cron triggers name them in `params.env` (resolved by name when they start). */
@Module({
  controllers: [EnvironmentsController],
  providers: [EnvironmentsService],
})
export class EnvironmentsModule {}
