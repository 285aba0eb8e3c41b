import type { Provider, Type } from '@nestjs/common';
import { AvailabilityZonesController, SchedulerStatsController } from './pools.controller';
import { PoolsService } from './pools.service';

// Controllers and providers of this area, registered in VolumeApiModule.
export const poolControllers: Type[] = [SchedulerStatsController, AvailabilityZonesController];
export const poolProviders: Provider[] = [PoolsService];
