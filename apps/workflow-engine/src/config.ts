import { z } from 'zod';
import { type Env, distributedInfraSchema, logLevelSchema, parseConfig, portSchema } from '@osc/http-common';
import { defaultGroupTransactions } from './engine/group-transactions-default';

const schema = z
  .object({
    /** Port of /healthz, /readyz and /metrics when this app runs on its own. */
    WORKFLOW_ENGINE_HEALTH_PORT: portSchema.default(9101),
    WORKFLOW_ENGINE_HEALTH_HOST: z.string().default('0.0.0.0'),
    LOG_LEVEL: logLevelSchema,
    /** What this process does: `all` (engine + executor), `engine` (commands and timers) or `executor` (actions). */
    WORKFLOW_ENGINE_ROLE: z.enum(['all', 'engine', 'executor']).default('all'),
    /** Engine commands handled at once by this process (bus prefetch). */
    WORKFLOW_ENGINE_PREFETCH: z.coerce.number().int().min(1).max(1000).default(32),
    /**
     * Complete side-effect-free standard actions (std.noop, std.echo without delay, std.fail) inside the
     * engine's transaction instead of through an executor job; `false` sends every action to executors.
     */
    WORKFLOW_ENGINE_INLINE_ACTIONS: z.enum(['true', 'false']).default('true'),
    /**
     * with-items items one engine transaction starts per task (the next transactions start as many
     * as were started before, see docs/workflow-engine.md); 0 starts them all in one transaction.
     */
    WORKFLOW_ENGINE_ITEMS_PER_DECISION: z.coerce.number().int().min(0).max(1_000_000).default(1000),
    /**
     * Engine transactions this process runs at once; the commands that wait meanwhile share the
     * next ones (up to 32 executions per transaction, see group-transactions.ts). Default 2, or 1
     * when WORKFLOW_ENGINE_INLINE_ACTIONS is false.
     */
    WORKFLOW_ENGINE_GROUP_TRANSACTIONS: z.coerce.number().int().min(1).max(64).optional(),
    /** Action runs executed at once by this process. */
    WORKFLOW_EXECUTOR_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(50),
    /** Base URL of workflow-api for async action callbacks (`Mistral-Callback-URL`). */
    WORKFLOW_API_PUBLIC_URL: z.string().url().optional(),
    /** Broker for `amqp` notification publishers (DSL-16.2); absent = amqp publishers are not configured. */
    WORKFLOW_NOTIFY_AMQP_URL: z.string().optional(),
    WORKFLOW_NOTIFY_EXCHANGE: z.string().default('mistral'),
    /** How often the reconciler looks for lost and stuck work (issue #15); 0 turns it off. */
    WORKFLOW_RECONCILE_INTERVAL_SECONDS: z.coerce.number().min(0).max(86_400).default(30),
    /** A task or execution RUNNING unchanged this long with nothing pending is re-driven or failed. */
    WORKFLOW_STUCK_AFTER_SECONDS: z.coerce
      .number()
      .min(1)
      .max(30 * 86_400)
      .default(300),
    /** How often each engine and executor records that it is alive (Mistral `[action_heartbeat] check_interval`). */
    WORKFLOW_EXECUTOR_HEARTBEAT_SECONDS: z.coerce.number().min(0.1).max(3600).default(10),
    /**
     * An executor whose last heartbeat is older is dead and its RUNNING actions are handled (Mistral
     * `max_missed_heartbeats` × `check_interval`); at least twice the heartbeat.
     */
    WORKFLOW_EXECUTOR_DEAD_AFTER_SECONDS: z.coerce.number().min(1).max(86_400).default(120),
  })
  .refine((c) => c.WORKFLOW_EXECUTOR_DEAD_AFTER_SECONDS >= 2 * c.WORKFLOW_EXECUTOR_HEARTBEAT_SECONDS, {
    message: 'must be at least twice WORKFLOW_EXECUTOR_HEARTBEAT_SECONDS',
    path: ['WORKFLOW_EXECUTOR_DEAD_AFTER_SECONDS'],
  });

export interface WorkflowEngineConfig {
  readonly health: { port: number; host: string };
  readonly logLevel: string;
  readonly role: 'all' | 'engine' | 'executor';
  readonly prefetch: number;
  readonly executorConcurrency: number;
  /** Default true (see `decideInline` in workflow-domain and `inline-actions.ts`). */
  readonly inlineActions?: boolean;
  /** with-items items one decision starts per task (0: all); absent: the engine's default (tests). */
  readonly itemsPerDecision?: number;
  /** Engine transactions run at once; absent: the engine's default (tests). */
  readonly groupTransactions?: number;
  readonly apiUrl?: string;
  readonly notifyAmqpUrl?: string;
  readonly notifyExchange: string;
  /** Lost and stuck work (issue #15; seconds). Defaults apply when absent (tests). */
  readonly reconcile?: {
    readonly intervalSeconds: number;
    readonly stuckAfterSeconds: number;
    readonly heartbeatSeconds: number;
    readonly executorDeadAfterSeconds: number;
  };
}

export function loadConfig(env: Env): WorkflowEngineConfig {
  const c = parseConfig('workflow-engine', schema, env);
  return Object.freeze({
    health: { port: c.WORKFLOW_ENGINE_HEALTH_PORT, host: c.WORKFLOW_ENGINE_HEALTH_HOST },
    logLevel: c.LOG_LEVEL,
    role: c.WORKFLOW_ENGINE_ROLE,
    prefetch: c.WORKFLOW_ENGINE_PREFETCH,
    executorConcurrency: c.WORKFLOW_EXECUTOR_CONCURRENCY,
    inlineActions: c.WORKFLOW_ENGINE_INLINE_ACTIONS === 'true',
    itemsPerDecision: c.WORKFLOW_ENGINE_ITEMS_PER_DECISION,
    groupTransactions:
      c.WORKFLOW_ENGINE_GROUP_TRANSACTIONS ??
      defaultGroupTransactions(c.WORKFLOW_ENGINE_INLINE_ACTIONS === 'true'),
    notifyExchange: c.WORKFLOW_NOTIFY_EXCHANGE,
    reconcile: {
      intervalSeconds: c.WORKFLOW_RECONCILE_INTERVAL_SECONDS,
      stuckAfterSeconds: c.WORKFLOW_STUCK_AFTER_SECONDS,
      heartbeatSeconds: c.WORKFLOW_EXECUTOR_HEARTBEAT_SECONDS,
      executorDeadAfterSeconds: c.WORKFLOW_EXECUTOR_DEAD_AFTER_SECONDS,
    },
    ...(c.WORKFLOW_NOTIFY_AMQP_URL ? { notifyAmqpUrl: c.WORKFLOW_NOTIFY_AMQP_URL } : {}),
    ...(c.WORKFLOW_API_PUBLIC_URL ? { apiUrl: c.WORKFLOW_API_PUBLIC_URL.replace(/\/$/, '') } : {}),
  });
}

export const loadInfraConfig = (env: Env) => parseConfig('workflow-engine', distributedInfraSchema, env);
