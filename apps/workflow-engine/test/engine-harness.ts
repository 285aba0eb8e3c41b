import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { StandardActionRunner } from '@osc/actions';
import {
  ACTION_JOB_QUEUE,
  ENGINE_COMMAND_QUEUE,
  ENGINE_TIMER_QUEUE,
  type TimerFiredPayload,
  engineCommand,
} from '@osc/contracts';
import {
  type CommandBus,
  InProcessCommandBus,
  InProcessJobQueue,
  type JobQueue,
  type MessagingLogger,
  OutboxRelay,
  OutboxWriter,
  RabbitMqCommandBus,
  type Subscription,
  type Worker,
  messagingMigrations,
} from '@osc/messaging';
import { type WorkflowExecution, newExecution, parseWorkflows } from '@osc/workflow-domain';
import {
  ServiceHeartbeat,
  definitionMigrations,
  dynamicActionMigrations,
  executionMigrations,
  insertExecution,
} from '@osc/workflow-persistence';
import { TEST_QUEUE_EXPIRES_MS } from '@osc/testing';
import { EngineCommandHandler } from '../src/engine/engine-command.handler';
import { ActionExecutor } from '../src/executor/action-executor';

export const POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const PROJECT = 'project-1';

/**
 * A throw-away PostgreSQL database with the workflow side's migrations applied. `applicationName`
 * names the returned data source's connections in `pg_stat_activity` (a benchmark tells its own
 * backends from the product's by it).
 */
export async function createEngineDatabase(applicationName?: string): Promise<{
  dataSource: DataSource;
  url: string;
  drop: () => Promise<void>;
}> {
  const name = `wf_engine_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = POSTGRES_URL.replace(/\/[^/]*$/, `/${name}`);
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations: [
      ...messagingMigrations,
      ...definitionMigrations,
      ...executionMigrations,
      ...dynamicActionMigrations,
    ] as never,
    extra: { max: 20 },
    ...(applicationName ? { applicationName } : {}),
  });
  await dataSource.initialize();
  await dataSource.runMigrations();
  return {
    dataSource,
    url,
    drop: async () => {
      if (dataSource.isInitialized) await dataSource.destroy();
      const c = new pg.Client({ connectionString: POSTGRES_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Stores every workflow of a YAML document as a definition row (what POST /v2/workflows does). */
export async function storeWorkflows(ds: DataSource, yaml: string): Promise<void> {
  for (const wf of parseWorkflows(yaml).workflows) {
    await ds.query(
      `INSERT INTO "workflow_definitions" ("name", "namespace", "project_id", "scope", "definition", "checksum", "spec", "input", "interface", "created_at")
       VALUES ($1, '', $2, 'private', $3, 'x', $4::jsonb, '', '{}', now())`,
      [wf.name, PROJECT, yaml, JSON.stringify(wf)],
    );
  }
}

/** One engine "instance": command consumer, timer worker and executor on the given bus and queue. */
export class EngineInstance {
  private sub?: Subscription;
  private heartbeat?: ServiceHeartbeat;
  private readonly workers: Worker[] = [];
  readonly relay: OutboxRelay;
  readonly outbox = new OutboxWriter();

  constructor(
    readonly dataSource: DataSource,
    readonly bus: CommandBus,
    readonly jobs: JobQueue,
    /** `role`: as the app's WORKFLOW_ENGINE_ROLE — engine (commands, timers, relay), executor (action runs) or all. */
    private readonly options: {
      prefetch?: number;
      executorConcurrency?: number;
      role?: 'all' | 'engine' | 'executor';
      /** Where the engine reports commands it cannot apply (default: stderr). */
      logger?: MessagingLogger;
      /** `heartbeatMs`: register the executor in workflow_service_instances and heartbeat it (issue #15). */
      heartbeatMs?: number;
      /** with-items items a decision starts per task (as WORKFLOW_ENGINE_ITEMS_PER_DECISION; default the engine's). */
      itemsPerDecision?: number;
      /** as WORKFLOW_ENGINE_INLINE_ACTIONS (default true): false sends every action run to the executor. */
      inlineActions?: boolean;
    } = {},
  ) {
    this.relay = new OutboxRelay(dataSource, bus, jobs, { pollIntervalMs: 200 });
    this.outbox.onCommitted(() => this.relay.notify());
  }

  async start(): Promise<void> {
    const role = this.options.role ?? 'all';
    if (role !== 'engine') {
      const concurrency = this.options.executorConcurrency ?? 20;
      if (this.options.heartbeatMs !== undefined) {
        this.heartbeat = new ServiceHeartbeat(this.dataSource, ['executor'], this.options.heartbeatMs);
        await this.heartbeat.start();
      }
      const executor = new ActionExecutor(
        this.dataSource,
        this.bus,
        new StandardActionRunner(),
        concurrency,
        this.heartbeat?.ids.executor ?? null,
      );
      this.workers.push(
        await this.jobs.process(ACTION_JOB_QUEUE, (job) => executor.run(job), { concurrency }),
      );
    }
    if (role === 'executor') return;
    const handler = new EngineCommandHandler(this.dataSource, this.outbox, {
      ...(this.options.logger ? { logger: this.options.logger } : {}),
      ...(this.options.itemsPerDecision !== undefined
        ? { itemsPerDecision: this.options.itemsPerDecision }
        : {}),
      ...(this.options.inlineActions !== undefined ? { inlineActions: this.options.inlineActions } : {}),
    });
    this.sub = await this.bus.consume(ENGINE_COMMAND_QUEUE, (m, info) => handler.handle(m, info), {
      prefetch: this.options.prefetch ?? 16,
    });
    this.workers.push(
      await this.jobs.process(
        ENGINE_TIMER_QUEUE,
        async (job) => {
          const data = job.data as TimerFiredPayload;
          await this.bus.publish(
            ENGINE_COMMAND_QUEUE,
            engineCommand(`timer:${data.timerId}`, 'engine.timer-fired', data),
          );
        },
        { concurrency: 4 },
      ),
    );
    await this.relay.start();
  }

  async stop(): Promise<void> {
    await this.sub?.cancel();
    for (const w of this.workers.splice(0)) await w.close();
    await this.relay.stop();
    await this.heartbeat?.stop();
  }
}

/** Creates an execution row and its start command, as POST /v2/executions does. */
export async function startExecution(
  ds: DataSource,
  outbox: OutboxWriter,
  workflowName: string,
  input: Record<string, unknown> = {},
  params: Record<string, unknown> = {},
): Promise<string> {
  const rows: { id: string; spec: unknown }[] = await ds.query(
    `SELECT "id", "spec" FROM "workflow_definitions" WHERE "name" = $1`,
    [workflowName],
  );
  const def = rows[0];
  if (!def) throw new Error(`no workflow ${workflowName}`);
  const ex: WorkflowExecution = newExecution(
    {
      id: randomUUID(),
      spec: def.spec as never,
      workflowId: def.id,
      workflowNamespace: '',
      projectId: PROJECT,
      input,
      params,
    },
    new Date(),
  );
  await ds.transaction(async (em) => {
    await insertExecution(em, ex);
    await outbox.add(em, {
      destination: 'bus',
      queue: ENGINE_COMMAND_QUEUE,
      message: engineCommand(`start:${ex.id}`, 'engine.start-execution', { executionId: ex.id }),
    });
  });
  return ex.id;
}

const TERMINAL = ['SUCCESS', 'ERROR', 'CANCELLED'];

/** Polls the execution row until it is in a terminal state (or `states`), failing after `timeoutMs`. */
export async function waitForState(
  ds: DataSource,
  id: string,
  states = TERMINAL,
  timeoutMs = 20_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  for (;;) {
    const rows: Record<string, unknown>[] = await ds.query(
      `SELECT * FROM "workflow_executions" WHERE "id" = $1`,
      [id],
    );
    const row = rows[0];
    if (row && states.includes(String(row['state']))) return row;
    if (Date.now() > deadline) throw new Error(`execution ${id} stayed ${String(row?.['state'])}`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 50);
  }
}

export async function taskStates(ds: DataSource, executionId: string): Promise<Record<string, string>> {
  const rows: { name: string; state: string }[] = await ds.query(
    `SELECT "name", "state" FROM "task_executions" WHERE "workflow_execution_id" = $1 ORDER BY "seq"`,
    [executionId],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.state]));
}

export const inProcessMessaging = () => ({ bus: new InProcessCommandBus(), jobs: new InProcessJobQueue() });

/** Prefixes every queue name so concurrent runs can share one RabbitMQ and one Redis. */
export function prefixedBus(bus: CommandBus, prefix: string): CommandBus {
  return {
    publish: (queue, msg) => bus.publish(prefix + queue, msg),
    consume: (queue, handler, opts) => bus.consume(prefix + queue, handler, opts),
    ping: () => bus.ping(),
    close: () => bus.close(),
  };
}

export function prefixedJobs(jobs: JobQueue, prefix: string): JobQueue {
  return {
    add: (queue, job) => jobs.add(prefix + queue, job),
    process: (queue, handler, opts) => jobs.process(prefix + queue, handler, opts),
    ping: () => jobs.ping(),
    close: () => jobs.close(),
  };
}

/**
 * A RabbitMQ bus for a multi-process test run. Its queues expire when unused for a while, so a run
 * killed before its teardown leaves nothing for long; the engine processes declare them alike
 * (`spawnEngineProcess` passes QUEUE_EXPIRES_MS).
 */
export const testRabbitBus = (): RabbitMqCommandBus =>
  new RabbitMqCommandBus({
    url: process.env['TEST_AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672',
    queueExpiresMs: TEST_QUEUE_EXPIRES_MS,
  });

/** Kills the children still running and waits until they are gone (a live consumer would declare its queue again). */
export async function killChildren(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGKILL');
      await gone;
    }),
  );
}

/**
 * Spawns test/engine-process.ts on the given database, queue and BullMQ prefixes (plus extra env,
 * e.g. ROLE or EXECUTOR_CONCURRENCY) and resolves once it prints "ready"; rejects if it exits first.
 * The child joins `opts.children` at once. Short job lock/stall times let a killed process's jobs come back quickly.
 */
export async function spawnEngineProcess(
  opts: { databaseUrl: string; queuePrefix: string; bullPrefix: string; children: ChildProcess[] },
  extraEnv: Record<string, string> = {},
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', path.join(__dirname, 'engine-process.ts')],
    {
      env: {
        ...process.env,
        DATABASE_URL: opts.databaseUrl,
        QUEUE_PREFIX: opts.queuePrefix,
        QUEUE_EXPIRES_MS: String(TEST_QUEUE_EXPIRES_MS),
        BULL_PREFIX: opts.bullPrefix,
        JOB_LOCK_MS: '3000',
        JOB_STALLED_MS: '1000',
        DB_POOL: '5',
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  opts.children.push(child); // tracked before it is ready, so a failed start is still killed at teardown
  child.stderr!.on('data', () => undefined);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d) => String(d).includes('ready') && resolve());
    child.once('exit', (code) =>
      reject(new Error(`${extraEnv['ROLE'] ?? 'engine'} process exited with ${code}`)),
    );
  });
  return child;
}
