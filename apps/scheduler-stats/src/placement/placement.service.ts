import os from 'node:os';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { choosePool, VOLUME_OPERATIONS } from '@osc/block-storage-domain';
import {
  MessageRepository,
  PoolRepository,
  ServiceRepository,
  VolumeRepository,
} from '@osc/block-storage-persistence';
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
 * The scheduler (BS-10): consumes `scheduler.schedule-volume`, asks the domain's `choosePool`
 * (filters and weigher) over the pools back ends reported, and in one transaction places the volume (once:
 * only while it has no host), debits the pool in the shared view and queues the create job for
 * the back end that owns the pool. No candidate → the volume goes to `error`.
 */
@Injectable()
export class PlacementService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('placement');
  private readonly volumes = new VolumeRepository();
  private readonly pools = new PoolRepository();
  private readonly services = new ServiceRepository();
  private readonly messages = new MessageRepository();
  private subscription: Subscription | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  /** This process as a cinder-scheduler service (os-services, os-hosts). */
  private readonly serviceHost =
    os
      .hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 100) || 'localhost';

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(COMMAND_BUS) private readonly bus: CommandBus,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(PLACEMENT_CONFIG) private readonly config: PlacementConfig,
  ) {}

  private heartbeat(): Promise<void> {
    return this.services.heartbeat(this.db, {
      binary: 'cinder-scheduler',
      host: this.serviceHost,
      availabilityZone: 'nova',
      now: this.clock.now(),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.heartbeat();
    this.heartbeatTimer = setInterval(
      () =>
        void this.heartbeat().catch((e: unknown) => this.log.warn(`service heartbeat failed: ${String(e)}`)),
      10000,
    );
    this.heartbeatTimer.unref();
    this.subscription = await this.bus.consume(BLOCK_STORAGE_SCHEDULER_QUEUE, (msg) => this.handle(msg), {
      prefetch: this.config.prefetch,
    });
  }

  async onModuleDestroy(): Promise<void> {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    await this.subscription?.cancel();
  }

  async handle(msg: CommandMessage): Promise<void> {
    const req = msg.payload as ScheduleVolumePayload;
    const v = await this.volumes.findById(this.db, req.volumeId, null);
    if (!v || v.status !== 'creating' || v.host !== null) return;
    const now = this.clock.now();
    const fresh = await this.pools.listFresh(
      this.db,
      new Date(now.getTime() - this.config.serviceDownSeconds * 1000),
    );
    // A cinder-volume service an operator disabled or froze (os-services) takes no new volumes; clones and
    // volumes from snapshots stay on the source's back end, which holds the bytes.
    const disabledBackends = await this.services.closedHosts(this.db, 'cinder-volume');
    const source = req.source;
    const result = choosePool(
      { pools: fresh, disabledBackends },
      {
        kind: 'volume',
        size: req.size,
        availabilityZone: req.availabilityZone,
        extraSpecs: req.extraSpecs,
        excludedPools: req.excludedPools,
        sourceBackend: source.kind === 'none' ? null : source.backend,
        capacityWeightMultiplier: this.config.capacityWeightMultiplier,
      },
    );
    if (result.kind === 'no-valid-backend') {
      const why = Object.entries(result.reasons)
        .map(([pool, reason]) => `${pool}: ${reason}`)
        .join('; ');
      this.log.warn(`no valid back end for volume ${v.id}: ${why || 'no pools reported'}`);
      // Cinder records a user message for the owner (GET /messages): schedule allocate volume, no backend.
      await this.db.transaction(async (em) => {
        const failed = await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.createFailed, now, {
          error_reason: `No valid backend was found. ${why || 'No pools are reported.'}`.slice(0, 1000),
        });
        if (failed) {
          await this.messages.record(em, {
            projectId: v.projectId,
            requestId: req.requestId,
            resourceType: 'VOLUME',
            resourceUuid: v.id,
            action: 'schedule-allocate-volume',
            detail: 'no-backend',
            now,
          });
        }
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
