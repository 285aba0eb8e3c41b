import { type Runtime, type RunningApp, startBackgroundApp } from '@osc/platform';
import type { CronSchedulerConfig } from './config';
import { CronSchedulerModule } from './cron-scheduler.module';

export {
  DEFAULT_BACKUP_POLICIES,
  DEFAULT_FIRING,
  loadConfig,
  loadInfraConfig,
  type CronSchedulerConfig,
  type EventTriggerListenerConfig,
} from './config';
export { CRON_SCHEDULER_CONFIG, CronSchedulerModule, CronSchedulerRunner } from './cron-scheduler.module';
export { CronTriggerFiring, type CronFiringOptions, type FiredTrigger } from './firing/cron-trigger-firing';
export { CronPoller, type CronPollerOptions } from './firing/cron-poller';
export {
  BackupPolicyFiring,
  type BackupPolicyFiringOptions,
  type FiredBackupPolicy,
  type RetentionPass,
} from './backup-policies/backup-policy-firing';
export { BackupPolicyPoller, type BackupPolicyPollerOptions } from './backup-policies/backup-policy-poller';
export {
  ExpirationPolicy,
  type ExpirationPolicyConfig,
  isExpirationEnabled,
} from './expiration/expiration-policy';
export { EventTriggerListenerRunner } from './event-triggers/event-trigger-listener.runner';
export { EventTriggerFiring, eventTriggerExecutionDescription } from './event-triggers/event-trigger-firing';
export { NotificationListener } from './event-triggers/notification-listener';
export { parseNotification, eventParams } from './event-triggers/notification';
export { SCHEMA_PARTS } from './schema';

/**
 * Start cron-scheduler on the given runtime. On its own (distributed) it serves /healthz, /readyz and
 * /metrics on its health port; inside the embedded process it runs without a port.
 */
export function startCronScheduler(
  config: CronSchedulerConfig,
  runtime: Runtime,
  opts: { http: boolean },
): Promise<RunningApp> {
  return startBackgroundApp({
    app: 'cron-scheduler',
    service: 'workflow',
    runtime,
    feature: CronSchedulerModule.forRoot(config),
    logLevel: config.logLevel,
    health: config.health,
    http: opts.http,
  });
}
