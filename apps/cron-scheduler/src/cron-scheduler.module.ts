import { Module } from '@nestjs/common';

/** Fires due cron triggers exactly once across replicas. */
@Module({})
export class CronSchedulerModule {}
