import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { type ServiceKind, heartbeatServiceInstance, removeServiceInstance } from '@osc/workflow-persistence';
import { type ReconcilerLog, jsonLineLog } from './reconciler-log';

/**
 * Registers this process's service instances (engine, executor, notifier) in
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
    private readonly dataSource: DataSource,
    kinds: readonly ServiceKind[],
    private readonly intervalMs: number,
    private readonly log: ReconcilerLog = jsonLineLog,
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
