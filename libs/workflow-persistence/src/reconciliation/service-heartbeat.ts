import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { SqlRunner } from '../executions/execution-rows';
import { type ServiceKind, heartbeatServiceInstance, removeServiceInstance } from './service-instances';

/** Where heartbeat failures are reported (the apps pass their structured logger). */
export type HeartbeatLog = (level: 'warn' | 'error', msg: string, fields: Record<string, unknown>) => void;

const stderrJsonLine: HeartbeatLog = (level, msg, fields) => {
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields })}\n`);
};

/**
 * Registers this process's service instances (api, engine, executor, notifier, cron_scheduler) in
 * `workflow_service_instances` and heartbeats them every `intervalMs` (Mistral's executor
 * heartbeats): an executor whose heartbeat is older than the dead bound lost its RUNNING actions. A
 * clean stop removes the rows; a killed process leaves them to go stale.
 */
export class ServiceHeartbeat {
  /** Instance id by kind. */
  readonly ids: Readonly<Partial<Record<ServiceKind, string>>>;
  private timer?: NodeJS.Timeout;
  private beating?: Promise<void>;

  constructor(
    private readonly dataSource: SqlRunner,
    kinds: readonly ServiceKind[],
    private readonly intervalMs: number,
    private readonly log: HeartbeatLog = stderrJsonLine,
  ) {
    this.ids = Object.fromEntries(kinds.map((k) => [k, randomUUID()]));
  }

  /** Registers every instance (the first heartbeat), then keeps beating. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => {
      if (!this.beating) this.beating = this.beat().finally(() => (this.beating = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    for (const id of Object.values(this.ids)) {
      await removeServiceInstance(this.dataSource, id).catch((e: unknown) =>
        this.log('warn', 'removing a service instance failed', { instanceId: id, error: String(e) }),
      );
    }
  }

  private async beat(): Promise<void> {
    for (const [kind, id] of Object.entries(this.ids) as [ServiceKind, string][]) {
      try {
        await heartbeatServiceInstance(this.dataSource, { id, kind, host: hostname(), pid: process.pid });
      } catch (e) {
        this.log('warn', 'service heartbeat failed', { instanceId: id, kind, error: String(e) });
      }
    }
  }
}
