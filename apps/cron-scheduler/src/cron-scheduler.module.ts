import {
  type DynamicModule,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { OutboxWriter } from '@osc/messaging';
import { ServiceHeartbeat } from '@osc/workflow-persistence';
import { CLOCK, type Clock, DATA_SOURCE, OUTBOX_WRITER } from '@osc/platform';
import { type CronSchedulerConfig, DEFAULT_BACKUP_POLICIES } from './config';
import { BackupPolicyFiring } from './backup-policies/backup-policy-firing';
import { BackupPolicyPoller } from './backup-policies/backup-policy-poller';
import { CronPoller } from './firing/cron-poller';
import { EXPIRATION_OFF, ExpirationPolicy } from './expiration/expiration-policy';
import { CronTriggerFiring } from './firing/cron-trigger-firing';
import {
  EVENT_TRIGGER_LISTENER_CONFIG,
  EventTriggerListenerRunner,
} from './event-triggers/event-trigger-listener.runner';

export const CRON_SCHEDULER_CONFIG = Symbol('CRON_SCHEDULER_CONFIG');

/** Starts the firing loop when the app boots and stops it (finishing the batch in flight) on shutdown. */
@Injectable()
export class CronSchedulerRunner implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('cron-scheduler');
  readonly firing: CronTriggerFiring;
  readonly poller: CronPoller;
  /** Backup policies (ours, issue 21): fired and retained by this process too. */
  readonly backupPolicies: BackupPolicyFiring;
  readonly backupPolicyPoller: BackupPolicyPoller;
  /** This process's `cron_scheduler` instance in `workflow_service_instances` (`GET /v2/services`). */
  readonly heartbeat: ServiceHeartbeat;

  constructor(
    @Inject(DATA_SOURCE) db: DataSource,
    @Inject(OUTBOX_WRITER) outbox: OutboxWriter,
    @Inject(CLOCK) clock: Clock,
    @Inject(CRON_SCHEDULER_CONFIG) config: CronSchedulerConfig,
  ) {
    const log = (level: 'warn' | 'error', message: string) =>
      level === 'warn' ? this.logger.warn(message) : this.logger.error(message);
    this.firing = new CronTriggerFiring(db, outbox, clock, {
      batchSize: config.firing.batchSize,
      log,
      onFired: (fired) => {
        for (const f of fired) {
          this.logger.log({
            msg: 'cron trigger fired',
            cronTriggerId: f.triggerId,
            cronTrigger: f.triggerName,
            scheduledAt: f.scheduledAt.toISOString(),
            executionId: f.executionId,
          });
        }
      },
    });
    this.poller = new CronPoller(db, this.firing, clock, {
      maxSleepMs: config.firing.maxSleepMs,
      busySleepMs: config.firing.busySleepMs,
      log,
    });
    const bp = config.backupPolicies ?? DEFAULT_BACKUP_POLICIES;
    this.backupPolicies = new BackupPolicyFiring(db, outbox, clock, {
      batchSize: config.firing.batchSize,
      serviceDownSeconds: bp.serviceDownSeconds,
      log,
      onFired: (fired) => {
        for (const f of fired)
          this.logger.log({
            msg: 'backup policy fired',
            backupPolicyId: f.policyId,
            scheduledAt: f.scheduledAt.toISOString(),
            backupIds: f.backupIds,
            skipped: f.skipped.length,
          });
      },
      onRetention: (pass) => {
        if (pass.deleted.length)
          this.logger.log({
            msg: 'backup policy retention',
            backupPolicyId: pass.policyId,
            deleted: pass.deleted,
            rebasing: pass.rebased,
          });
      },
    });
    this.backupPolicyPoller = new BackupPolicyPoller(this.backupPolicies, clock, {
      maxSleepMs: config.firing.maxSleepMs,
      busySleepMs: config.firing.busySleepMs,
      retentionIntervalMs: bp.retentionIntervalMs,
      log,
    });
    this.heartbeat = new ServiceHeartbeat(
      db,
      ['cron_scheduler'],
      (config.heartbeatSeconds ?? 10) * 1000,
      (level, msg, fields) =>
        level === 'warn' ? this.logger.warn({ ...fields, msg }) : this.logger.error({ ...fields, msg }),
    );
    this.expiration = new ExpirationPolicy(db, clock, config.expiration ?? EXPIRATION_OFF, {
      info: (fields, msg) => this.logger.log({ ...fields, msg }),
      warn: (fields, msg) => this.logger.warn({ ...fields, msg }),
    });
  }

  readonly expiration: ExpirationPolicy;

  async onApplicationBootstrap(): Promise<void> {
    await this.heartbeat.start();
    this.poller.start();
    this.backupPolicyPoller.start();
    this.expiration.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([
      this.poller.stop(),
      this.backupPolicyPoller.stop(),
      this.expiration.stop(),
      this.heartbeat.stop(),
    ]);
  }
}

/** Fires due cron triggers exactly once across replicas, and event triggers on notifications. */
@Module({})
export class CronSchedulerModule {
  static forRoot(config: CronSchedulerConfig): DynamicModule {
    return {
      module: CronSchedulerModule,
      providers: [
        { provide: CRON_SCHEDULER_CONFIG, useValue: config },
        { provide: EVENT_TRIGGER_LISTENER_CONFIG, useValue: config },
        CronSchedulerRunner,
        EventTriggerListenerRunner,
      ],
      exports: [CronSchedulerRunner, EventTriggerListenerRunner],
    };
  }
}
