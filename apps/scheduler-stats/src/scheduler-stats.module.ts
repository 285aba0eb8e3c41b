import { type DynamicModule, Module } from '@nestjs/common';
import type { SchedulerStatsConfig } from './config';
import { PLACEMENT_CONFIG, PlacementService } from './placement/placement.service';

/** Knows the storage back ends and their pools and places new volumes. */
@Module({})
export class SchedulerStatsModule {
  static forRoot(config: SchedulerStatsConfig): DynamicModule {
    return {
      module: SchedulerStatsModule,
      providers: [{ provide: PLACEMENT_CONFIG, useValue: config.placement }, PlacementService],
      exports: [PlacementService],
    };
  }
}
