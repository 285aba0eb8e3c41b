import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  admitFilters,
  capabilityText,
  isTrueish,
  poolsForType,
  queryValue,
  supports,
  type PoolState,
  type SchedulerView,
} from '@osc/block-storage-domain';
import { PoolRepository, ServiceRepository, type StoredPool } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VolumeTypesService } from '../types/volume-types.service';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

/**
 * Pools and zones as the back ends report them (BS-7.12.4, BS-7.1.2); also the live view other
 * services place and move volumes by.
 */
@Injectable()
export class PoolsService {
  private readonly pools = new PoolRepository();
  private readonly services = new ServiceRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
    private readonly types: VolumeTypesService,
  ) {}

  /** Pools whose back end reported within the service-down interval (BS-10.1). */
  fresh(): Promise<StoredPool[]> {
    return this.pools.listFresh(
      this.db,
      new Date(this.clock.now().getTime() - this.config.serviceDownSeconds * 1000),
    );
  }

  /** Zones of the live pools plus the installation default (BS-7.7.6). */
  async knownZones(): Promise<Set<string>> {
    const zones = new Set((await this.fresh()).map((p) => p.availabilityZone));
    zones.add(this.config.defaultAvailabilityZone);
    return zones;
  }

  /** Back ends whose cinder-volume service an operator disabled or froze: no volume is placed or moved there. */
  disabledBackends(): Promise<Set<string>> {
    return this.services.closedHosts(this.db, 'cinder-volume');
  }

  /** The live pools and the disabled back ends: what the scheduler's `choosePool` chooses from. */
  async schedulerView(): Promise<SchedulerView> {
    return { pools: await this.fresh(), disabledBackends: await this.disabledBackends() };
  }

  async getPools(api: ApiRequest): Promise<Record<string, unknown>> {
    api.authorize('scheduler_extension:scheduler_stats:get_pools');
    const detail = isTrueish(queryValue(api.query['detail']));
    let pools: PoolState[] = (await this.fresh()).map((p) => ({
      name: p.name,
      backend: p.backend,
      availabilityZone: p.availabilityZone,
      capabilities: p.capabilities,
    }));
    if (supports(api.mv, 'pools.filters')) {
      // The pool allow-list applies to admins too (BS-5.7).
      const filters = admitFilters('pool', api.query, {
        mv: api.mv,
        isAdmin: false,
        allowList: supports(api.mv, 'list.reject-invalid-filters') ? ['name', 'volume_type'] : undefined,
        ignore: ['detail'],
      });
      const name = filters['name'];
      if (name !== undefined) pools = pools.filter((p) => p.name === name);
      const typeRef = filters['volume_type'];
      if (typeRef !== undefined && supports(api.mv, 'pools.volume-type-filter')) {
        const t = await this.types.visibleType(api, typeRef);
        pools = poolsForType(pools, t.extraSpecs);
      }
      for (const [k, v] of Object.entries(filters)) {
        if (k === 'name' || k === 'volume_type') continue;
        pools = pools.filter(
          (p) =>
            p.capabilities[k] !== undefined &&
            capabilityText(p.capabilities[k]).toLowerCase() === v.toLowerCase(),
        );
      }
    }
    return {
      pools: pools.map((p) => (detail ? { name: p.name, capabilities: p.capabilities } : { name: p.name })),
    };
  }

  async zones(): Promise<Record<string, unknown>> {
    const zones = await this.knownZones();
    return {
      availabilityZoneInfo: [...zones]
        .sort()
        .map((zoneName) => ({ zoneName, zoneState: { available: true } })),
    };
  }
}
