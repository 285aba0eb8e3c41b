import { returnedRows } from '@osc/persistence';
import type { SqlRunner } from '../executions/execution-rows';

/** Kinds of running service instances, as Mistral's `GET /v2/services` names them (`type`). */
export const SERVICE_KINDS = ['api', 'engine', 'executor', 'notifier', 'cron_scheduler'] as const;
export type ServiceKind = (typeof SERVICE_KINDS)[number];

/** One running instance of a workflow service in some process. */
export interface ServiceInstance {
  readonly id: string;
  readonly kind: ServiceKind;
  readonly host: string;
  readonly pid: number;
  readonly startedAt: Date;
  readonly heartbeatAt: Date;
}

type Row = Record<string, unknown>;
const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));

/**
 * Registers an instance, or records a heartbeat of one already registered (the database clock, so
 * instances on hosts whose clocks differ are compared fairly). An instance whose row was removed as
 * dead while it was stalled registers itself again.
 */
export async function heartbeatServiceInstance(
  db: SqlRunner,
  i: Pick<ServiceInstance, 'id' | 'kind' | 'host' | 'pid'>,
): Promise<void> {
  await db.query(
    `INSERT INTO "workflow_service_instances" ("id", "kind", "host", "pid") VALUES ($1, $2, $3, $4)
     ON CONFLICT ("id") DO UPDATE SET "heartbeat_at" = now()`,
    [i.id, i.kind, i.host, i.pid],
  );
}

/** Removes an instance that stops cleanly. */
export async function removeServiceInstance(db: SqlRunner, id: string): Promise<void> {
  await db.query(`DELETE FROM "workflow_service_instances" WHERE "id" = $1`, [id]);
}

/**
 * Every registered instance (the shape of `GET /v2/services`), oldest first; with `aliveWithinSeconds`
 * only those whose last heartbeat is at most that old by the database clock (a coordination backend
 * forgets silent members the same way).
 */
export async function listServiceInstances(
  db: SqlRunner,
  aliveWithinSeconds?: number,
): Promise<ServiceInstance[]> {
  const alive =
    aliveWithinSeconds === undefined ? '' : ` WHERE "heartbeat_at" >= now() - make_interval(secs => $1)`;
  const rows: Row[] = await db.query(
    `SELECT "id", "kind", "host", "pid", "started_at", "heartbeat_at" FROM "workflow_service_instances"${alive} ORDER BY "started_at", "id"`,
    aliveWithinSeconds === undefined ? [] : [aliveWithinSeconds],
  );
  return rows.map((r) => ({
    id: String(r['id']),
    kind: r['kind'] as ServiceKind,
    host: String(r['host']),
    pid: Number(r['pid']),
    startedAt: date(r['started_at']),
    heartbeatAt: date(r['heartbeat_at']),
  }));
}

/**
 * Deletes the instances silent for more than `deadAfterSeconds` that no RUNNING action names any
 * more (their lost actions were handled first). Returns how many went.
 */
export async function deleteDeadServiceInstances(db: SqlRunner, deadAfterSeconds: number): Promise<number> {
  const rows = returnedRows<Row>(
    await db.query(
      `DELETE FROM "workflow_service_instances" s
      WHERE s."heartbeat_at" < now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM "action_executions" a WHERE a."executor_id" = s."id" AND a."state" = 'RUNNING')
      RETURNING s."id"`,
      [deadAfterSeconds],
    ),
  );
  return rows.length;
}
