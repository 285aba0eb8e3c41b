import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { placeVolume, type PoolState } from '@osc/block-storage-domain';
import { PoolRepository, VolumeRepository } from '@osc/block-storage-persistence';
import {
  BLOCK_STORAGE_SCHEDULER_QUEUE,
  VOLUME_CREATE_JOB,
  backendJobQueue,
  type ScheduleVolumePayload,
  type VolumeCreateJob,
} from '@osc/contracts';
import { type CommandBus, type CommandMessage, OutboxWriter, type Subscription } from '@osc/messaging';
import { CLOCK, COMMAND_BUS, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';

export const PLACEMENT_CONFIG = Symbol('PLACEMENT_CONFIG');
export interface PlacementConfig {
  /** 1.0 spreads volumes over pools, negative values stack them (BS-10.3). */
  readonly capacityWeightMultiplier: number;
  /** Pool stats older than this are ignored (BS-10.1). */
  readonly serviceDownSeconds: number;
  readonly prefetch: number;
}

/**
 * The scheduler (BS-10): consumes `scheduler.schedule-volume`, runs the domain's filters and
 * weigher over the pools back ends reported, and in one transaction places the volume (once:
 * only while it has no host), debits the pool in the shared view and queues the create job for
 * the back end that owns the pool. No candidate → the volume goes to `error`.
 */
@Injectable()
export class PlacementService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('placement');
  private readonly volumes = new VolumeRepository();
  private readonly pools = new PoolRepository();
  private subscription: Subscription | null = null;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(COMMAND_BUS) private readonly bus: CommandBus,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(PLACEMENT_CONFIG) private readonly config: PlacementConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await this.bus.consume(BLOCK_STORAGE_SCHEDULER_QUEUE, (msg) => this.handle(msg), { prefetch: this.config.prefetch });
  }

  async onModuleDestroy(): Promise<void> {
    await this.subscription?.cancel();
  }

  async handle(msg: CommandMessage): Promise<void> {
    const req = msg.payload as ScheduleVolumePayload;
    const v = await this.volumes.findById(this.db, req.volumeId, null);
    if (!v || v.status !== 'creating' || v.host !== null) return;
    const now = this.clock.now();
    const fresh = await this.pools.listFresh(this.db, new Date(now.getTime() - this.config.serviceDownSeconds * 1000));
    let pools: PoolState[] = fresh.map((p) => ({ name: p.name, backend: p.backend, availabilityZone: p.availabilityZone, capabilities: p.capabilities }));
    // Clones and volumes from snapshots stay on the source's back end, which holds the bytes.
    const source = req.source;
    if (source.kind !== 'none' && source.backend !== null) pools = pools.filter((p) => p.backend === source.backend);
    const result = placeVolume(pools, { size: req.size, availabilityZone: req.availabilityZone, extraSpecs: req.extraSpecs, excludedPools: req.excludedPools }, {
      capacityWeightMultiplier: this.config.capacityWeightMultiplier,
    });
    if (result.kind === 'no-valid-backend') {
      const why = Object.entries(result.reasons)
        .map(([pool, reason]) => `${pool}: ${reason}`)
        .join('; ');
      this.log.warn(`no valid back end for volume ${v.id}: ${why || 'no pools reported'}`);
      await this.volumes.compareAndSetStatus(this.db, v.id, ['creating'], 'error', now, {
        error_reason: `No valid backend was found. ${why || 'No pools are reported.'}`.slice(0, 1000),
      });
      return;
    }
    const pool = result.pool;
    await this.db.transaction(async (em) => {
      if (!(await this.volumes.assignHost(em, v.id, pool.name, now))) return;
      await this.pools.debit(em, pool.name, req.size);
      const job: VolumeCreateJob = { volumeId: v.id, pool: pool.name, schedule: req };
      await this.outbox.add(em, {
        destination: 'jobs',
        queue: backendJobQueue(pool.backend),
        job: { id: `volume-create-${v.id}-${req.attempt}`, name: VOLUME_CREATE_JOB, data: job, attempts: 1 },
        partitionKey: v.id,
      });
    });
  }
}
