import { z } from 'zod';
import {
  type Env,
  amqpUrlSchema,
  distributedInfraSchema,
  logLevelSchema,
  parseConfig,
  portSchema,
} from '@osc/http-common';
import { EXPIRABLE_STATES } from '@osc/workflow-persistence';
import type { ExpirationPolicyConfig } from './expiration/expiration-policy';

const schema = z.object({
  /** Port of /healthz, /readyz and /metrics when this app runs on its own. */
  CRON_SCHEDULER_HEALTH_PORT: portSchema.default(9102),
  CRON_SCHEDULER_HEALTH_HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: logLevelSchema,
  /** Triggers fired per transaction. */
  CRON_SCHEDULER_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(100),
  /** Longest sleep between looks at the table: triggers created by the API are picked up within it. */
  CRON_SCHEDULER_MAX_SLEEP_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  /** Sleep while due triggers are held by another replica, or after a database error. */
  CRON_SCHEDULER_BUSY_SLEEP_MS: z.coerce.number().int().min(1).max(10_000).default(50),
  /**
   * Broker whose oslo.messaging notifications fire event triggers; defaults to AMQP_URL. Without
   * either (embedded mode without a broker) event triggers are stored but never fire.
   */
  EVENT_TRIGGERS_AMQP_URL: amqpUrlSchema.optional(),
  AMQP_URL: amqpUrlSchema.optional(),
  QUEUE_PREFIX: z
    .string()
    .regex(/^([A-Za-z0-9][A-Za-z0-9._-]{0,60})?$/, 'letters, digits, dot, underscore and dash only')
    .default(''),
  /** How soon the listener follows triggers created or deleted through the API. */
  /** How often this process records its `cron_scheduler` instance (`GET /v2/services`), as the engine's heartbeat. */
  WORKFLOW_EXECUTOR_HEARTBEAT_SECONDS: z.coerce.number().min(0.1).max(3600).default(10),
  /** Seconds after which a back end without fresh pool stats counts as down: backup policies skip its volumes (as volume-api's VOLUME_SERVICE_DOWN_SECONDS). */
  VOLUME_SERVICE_DOWN_SECONDS: z.coerce.number().int().min(1).default(180),
  /** Milliseconds between two retention passes of the backup policies (ours, issue 21). */
  BACKUP_POLICY_RETENTION_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(5000),
  EVENT_TRIGGERS_SYNC_MS: z.coerce.number().int().min(50).max(600_000).default(1000),
  /** Declare notification exchanges durable (oslo.messaging's `amqp_durable_queues`; default false). */
  EVENT_TRIGGERS_EXCHANGE_DURABLE: z.enum(['true', 'false']).default('false'),
  // Mistral's [execution_expiration_policy] options, upper-cased with the group as prefix.
  /** Minutes between passes (decimals allowed); unset = the policy is off. */
  EXECUTION_EXPIRATION_POLICY_EVALUATION_INTERVAL: z.coerce.number().positive().max(525_600).optional(),
  /** Remove completed root executions not updated for this many minutes; 0 = off. */
  EXECUTION_EXPIRATION_POLICY_OLDER_THAN: z.coerce.number().min(0).max(52_560_000).default(0),
  /** Keep at most this many completed root executions; 0 = off. */
  EXECUTION_EXPIRATION_POLICY_MAX_FINISHED_EXECUTIONS: z.coerce.number().int().min(0).default(0),
  /** Executions removed per transaction; 0 = all at once. */
  EXECUTION_EXPIRATION_POLICY_BATCH_SIZE: z.coerce.number().int().min(0).max(100_000).default(0),
  /** Comma-separated completed states never removed (SUCCESS, ERROR, CANCELLED). */
  EXECUTION_EXPIRATION_POLICY_IGNORED_STATES: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim().toUpperCase())
        .filter((s) => s.length > 0),
    )
    .refine(
      (v) => v.every((s) => (EXPIRABLE_STATES as readonly string[]).includes(s)),
      `states must be among ${EXPIRABLE_STATES.join(', ')}`,
    ),
});

/** The notification listener of event triggers (absent: event triggers never fire). */
export interface EventTriggerListenerConfig {
  readonly amqpUrl: string;
  readonly queuePrefix: string;
  readonly syncIntervalMs: number;
  readonly exchangeDurable: boolean;
}

export interface CronSchedulerConfig {
  readonly health: { port: number; host: string };
  readonly logLevel: string;
  readonly firing: { batchSize: number; maxSleepMs: number; busySleepMs: number };
  readonly eventTriggers?: EventTriggerListenerConfig;
  /** The execution expiration policy (absent: off). */
  readonly expiration?: ExpirationPolicyConfig;
  /** Seconds between heartbeats of this process's `cron_scheduler` instance (absent: 10). */
  readonly heartbeatSeconds?: number;
  /** Backup policies (ours): absent = {@link DEFAULT_BACKUP_POLICIES}. */
  readonly backupPolicies?: { readonly serviceDownSeconds: number; readonly retentionIntervalMs: number };
}

/** Defaults of the backup policies' settings (for callers building a config by hand). */
export const DEFAULT_BACKUP_POLICIES: NonNullable<CronSchedulerConfig['backupPolicies']> = Object.freeze({
  serviceDownSeconds: 180,
  retentionIntervalMs: 5000,
});

/** Defaults of the firing settings (for callers building a config by hand, e.g. the embedded launcher). */
export const DEFAULT_FIRING: CronSchedulerConfig['firing'] = Object.freeze({
  batchSize: 100,
  maxSleepMs: 500,
  busySleepMs: 50,
});

export function loadConfig(env: Env): CronSchedulerConfig {
  const c = parseConfig('cron-scheduler', schema, env);
  const amqpUrl = c.EVENT_TRIGGERS_AMQP_URL ?? c.AMQP_URL;
  return Object.freeze({
    health: { port: c.CRON_SCHEDULER_HEALTH_PORT, host: c.CRON_SCHEDULER_HEALTH_HOST },
    logLevel: c.LOG_LEVEL,
    heartbeatSeconds: c.WORKFLOW_EXECUTOR_HEARTBEAT_SECONDS,
    backupPolicies: {
      serviceDownSeconds: c.VOLUME_SERVICE_DOWN_SECONDS,
      retentionIntervalMs: c.BACKUP_POLICY_RETENTION_INTERVAL_MS,
    },
    firing: {
      batchSize: c.CRON_SCHEDULER_BATCH_SIZE,
      maxSleepMs: c.CRON_SCHEDULER_MAX_SLEEP_MS,
      busySleepMs: c.CRON_SCHEDULER_BUSY_SLEEP_MS,
    },
    expiration: {
      evaluationIntervalMinutes: c.EXECUTION_EXPIRATION_POLICY_EVALUATION_INTERVAL,
      olderThanMinutes: c.EXECUTION_EXPIRATION_POLICY_OLDER_THAN,
      maxFinishedExecutions: c.EXECUTION_EXPIRATION_POLICY_MAX_FINISHED_EXECUTIONS,
      batchSize: c.EXECUTION_EXPIRATION_POLICY_BATCH_SIZE,
      ignoredStates: c.EXECUTION_EXPIRATION_POLICY_IGNORED_STATES,
    },
    eventTriggers: amqpUrl
      ? {
          amqpUrl,
          queuePrefix: c.QUEUE_PREFIX,
          syncIntervalMs: c.EVENT_TRIGGERS_SYNC_MS,
          exchangeDurable: c.EVENT_TRIGGERS_EXCHANGE_DURABLE === 'true',
        }
      : undefined,
  });
}

export const loadInfraConfig = (env: Env) => parseConfig('cron-scheduler', distributedInfraSchema, env);
