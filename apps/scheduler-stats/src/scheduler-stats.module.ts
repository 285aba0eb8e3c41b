import { type DynamicModule, Module } from '@nestjs/common';
import type { SchedulerStatsConfig } from './config';
import { PLACEMENT_CONFIG, PlacementService } from './placement/placement.service';
import { RECONCILE_CONFIG, ReconcilerService } from './reconcile/reconciler.service';

/** Knows the storage back ends and their pools, places new volumes and reconciles stuck work. */
@Module({})
export class SchedulerStatsModule {
  static forRoot(config: SchedulerStatsConfig): DynamicModule {
    return {
      module: SchedulerStatsModule,
      providers: [
        { provide: PLACEMENT_CONFIG, useValue: config.placement },
        PlacementService,
        { provide: RECONCILE_CONFIG, useValue: config.reconcile },
        ReconcilerService,
      ],
      exports: [PlacementService, ReconcilerService],
    };
  }
}
