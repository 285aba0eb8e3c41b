import { affectedOf, rowsOf, type Queryable } from '../sql';

type Row = Record<string, any>;

/** Cinder's binaries. */
export const SERVICE_BINARIES = ['cinder-scheduler', 'cinder-volume', 'cinder-backup'] as const;
export type ServiceBinary = (typeof SERVICE_BINARIES)[number];

export interface StoredService {
  readonly binary: string;
  readonly host: string;
  readonly availabilityZone: string;
  readonly disabled: boolean;
  readonly disabledReason: string | null;
  readonly frozen: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date | null;
  readonly modifiedAt: Date | null;
}

const toService = (r: Row): StoredService => ({
  binary: r['binary'],
  host: r['host'],
  availabilityZone: r['availability_zone'],
  disabled: Boolean(r['disabled']),
  disabledReason: r['disabled_reason'] ?? null,
  frozen: Boolean(r['frozen']),
  createdAt: new Date(r['created_at']),
  updatedAt: r['updated_at'] === null ? null : new Date(r['updated_at']),
  modifiedAt: r['modified_at'] === null ? null : new Date(r['modified_at']),
});

/**
 * The services table: each process heartbeats its own row (scheduler-stats as cinder-scheduler,
 * each volume back end as cinder-volume on `host@backend`); operators change the admin columns.
 */
export class ServiceRepository {
  /** Creates the row on first report, then bumps `updated_at` and `report_count`; admin columns are kept. */
  async heartbeat(
    db: Queryable,
    s: { binary: ServiceBinary; host: string; availabilityZone: string; now: Date },
  ): Promise<void> {
    await db.query(
      `INSERT INTO "services" ("binary", "host", "availability_zone", "report_count", "created_at", "updated_at") VALUES ($1, $2, $3, 1, $4, $4)
       ON CONFLICT ("binary", "host") DO UPDATE SET "availability_zone" = EXCLUDED."availability_zone", "updated_at" = EXCLUDED."updated_at",
         "report_count" = "services"."report_count" + 1`,
      [s.binary, s.host, s.availabilityZone, s.now],
    );
  }

  /**
   * Hosts of the `binary` services an operator disabled or froze (os-services): they take no new
   * work, as Cinder's host manager schedules only from services that are neither.
   */
  async closedHosts(db: Queryable, binary: string): Promise<Set<string>> {
    return new Set(
      (await this.list(db, { binary })).filter((svc) => svc.disabled || svc.frozen).map((svc) => svc.host),
    );
  }

  /** Rows ordered by binary, host; `host` matches the host part too (`vm` finds `vm@file`), as Cinder's filter does. */

  async list(db: Queryable, filter: { host?: string; binary?: string } = {}): Promise<StoredService[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    if (filter.host !== undefined) {
      values.push(filter.host);
      where.push(
        `(host = $${values.length} OR split_part(split_part(host, '#', 1), '@', 1) = $${values.length} OR split_part(host, '#', 1) = $${values.length})`,
      );
    }
    if (filter.binary !== undefined) {
      values.push(filter.binary);
      where.push(`"binary" = $${values.length}`);
    }
    const sql = `SELECT * FROM "services"${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY "binary", host`;
    return rowsOf<Row>(await db.query(sql, values)).map(toService);
  }

  async find(db: Queryable, host: string, binary: string): Promise<StoredService | null> {
    const r = rowsOf<Row>(
      await db.query(`SELECT * FROM "services" WHERE host = $1 AND "binary" = $2`, [host, binary]),
    )[0];
    return r ? toService(r) : null;
  }

  /** Sets the admin columns of one service; false when there is no such row. */
  async setAdminState(
    db: Queryable,
    host: string,
    binary: string,
    set: { disabled?: boolean; disabledReason?: string | null; frozen?: boolean },
    now: Date,
  ): Promise<boolean> {
    const sets: string[] = [];
    const values: unknown[] = [host, binary, now];
    if (set.disabled !== undefined) sets.push(`disabled = $${values.push(set.disabled)}`);
    if (set.disabledReason !== undefined) sets.push(`disabled_reason = $${values.push(set.disabledReason)}`);
    if (set.frozen !== undefined) sets.push(`frozen = $${values.push(set.frozen)}`);
    return (
      affectedOf(
        await db.query(
          `UPDATE "services" SET ${[...sets, 'modified_at = $3'].join(', ')} WHERE host = $1 AND "binary" = $2`,
          values,
        ),
      ) > 0
    );
  }
}
