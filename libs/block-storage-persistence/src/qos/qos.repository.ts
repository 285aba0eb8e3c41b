import type { QosAssociation, QosConsumer, QosSpecsValue } from '@osc/block-storage-domain';
import { Params, affectedOf, rowsOf, type Queryable } from '../sql';

type Row = Record<string, any>;

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const SELECT = `SELECT q.id, q.name, q.consumer,
  COALESCE((SELECT json_object_agg(i.key, i.value) FROM "qos_spec_items" i WHERE i.qos_specs_id = q.id), '{}'::json) AS specs
  FROM "qos_specs" q`;

const parseSpecs = (raw: unknown): Record<string, string | null> =>
  (typeof raw === 'string' ? JSON.parse(raw) : (raw ?? {})) as Record<string, string | null>;

const toQos = (r: Row): QosSpecsValue => ({
  id: r['id'],
  name: r['name'],
  consumer: r['consumer'] as QosConsumer,
  specs: parseSpecs(r['specs']),
});

/** A page of the list: exact-match filters, one sort column before created_at and id, marker, limit, offset. */
export interface QosListQuery {
  readonly filters: { readonly id?: string; readonly name?: string; readonly consumer?: string };
  readonly sortKey: 'created_at' | 'name' | 'consumer' | 'id';
  readonly desc: boolean;
  readonly marker: string | null;
  readonly limit: number;
  readonly offset: number;
}

/** Why an association could not be made. */
export type QosAssociateOutcome = 'associated' | 'no-type' | { readonly otherSpecsId: string };

/**
 * QoS specs with their items, and the `volume_types.qos_specs_id` links. Callers that check and
 * then write (delete while in use, associate) hold the spec row locked ({@link lock}) in a
 * transaction, so a concurrent delete cannot leave a type pointing at a deleted spec.
 */
export class QosSpecsRepository {
  async insert(db: Queryable, q: QosSpecsValue, now: Date): Promise<void> {
    await db.query(`INSERT INTO "qos_specs" (id, name, consumer, created_at) VALUES ($1, $2, $3, $4)`, [
      q.id,
      q.name,
      q.consumer,
      now,
    ]);
    await this.setItems(db, q.id, q.specs);
  }

  async find(db: Queryable, id: string): Promise<QosSpecsValue | null> {
    if (!UUID.test(id)) return null;
    const r = rowsOf<Row>(
      await db.query(`${SELECT} WHERE q.deleted = false AND q.id = $1::uuid`, [id.toLowerCase()]),
    )[0];
    return r ? toQos(r) : null;
  }

  /** Locks an undeleted spec row for the rest of the transaction; false when there is none. */
  async lock(db: Queryable, id: string): Promise<boolean> {
    if (!UUID.test(id)) return false;
    return (
      rowsOf(
        await db.query(`SELECT id FROM "qos_specs" WHERE id = $1::uuid AND deleted = false FOR UPDATE`, [
          id.toLowerCase(),
        ]),
      ).length > 0
    );
  }

  /** Undeleted specs in the query's order (Cinder's default: newest first). */
  async list(db: Queryable, q: QosListQuery): Promise<QosSpecsValue[]> {
    const p = new Params();
    const where = ['q.deleted = false'];
    if (q.filters.id !== undefined)
      where.push(UUID.test(q.filters.id) ? `q.id = ${p.add(q.filters.id.toLowerCase())}::uuid` : 'false');
    if (q.filters.name !== undefined) where.push(`q.name = ${p.add(q.filters.name)}`);
    if (q.filters.consumer !== undefined) where.push(`q.consumer = ${p.add(q.filters.consumer)}`);
    const cols = (a: string): string[] =>
      q.sortKey === 'id'
        ? [`${a}.id`]
        : [...(q.sortKey === 'created_at' ? [] : [`${a}."${q.sortKey}"`]), `${a}.created_at`, `${a}.id`];
    if (q.marker !== null) {
      where.push(
        `(${cols('q').join(', ')}) ${q.desc ? '<' : '>'} (SELECT ${cols('mk').join(', ')} FROM "qos_specs" mk WHERE mk.id = ${p.add(q.marker)}::uuid)`,
      );
    }
    const dir = q.desc ? 'DESC' : 'ASC';
    const order = cols('q')
      .map((c) => `${c} ${dir}`)
      .join(', ');
    const sql = `${SELECT} WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${p.add(q.limit)} OFFSET ${p.add(q.offset)}`;
    return rowsOf<Row>(await db.query(sql, p.values)).map(toQos);
  }

  async setItems(db: Queryable, id: string, specs: Readonly<Record<string, string | null>>): Promise<void> {
    for (const [key, value] of Object.entries(specs)) {
      await db.query(
        `INSERT INTO "qos_spec_items" (qos_specs_id, key, value) VALUES ($1, $2, $3) ON CONFLICT (qos_specs_id, key) DO UPDATE SET value = EXCLUDED.value`,
        [id, key, value],
      );
    }
  }

  async update(
    db: Queryable,
    id: string,
    set: { consumer?: QosConsumer; specs: Readonly<Record<string, string | null>> },
    now: Date,
  ): Promise<void> {
    if (set.consumer !== undefined) {
      await db.query(`UPDATE "qos_specs" SET consumer = $2, updated_at = $3 WHERE id = $1`, [
        id,
        set.consumer,
        now,
      ]);
    } else {
      await db.query(`UPDATE "qos_specs" SET updated_at = $2 WHERE id = $1`, [id, now]);
    }
    await this.setItems(db, id, set.specs);
  }

  /** Deletes the items of `keys`; returns the first key the spec does not have (then nothing is deleted). */
  async deleteKeys(db: Queryable, id: string, keys: readonly string[]): Promise<string | null> {
    const present = new Set(
      rowsOf<{ key: string }>(
        await db.query(
          `SELECT key FROM "qos_spec_items" WHERE qos_specs_id = $1 AND key = ANY($2::varchar[])`,
          [id, keys],
        ),
      ).map((r) => r.key),
    );
    const missing = keys.find((k) => !present.has(k));
    if (missing !== undefined) return missing;
    if (keys.length > 0)
      await db.query(`DELETE FROM "qos_spec_items" WHERE qos_specs_id = $1 AND key = ANY($2::varchar[])`, [
        id,
        keys,
      ]);
    return null;
  }

  /** Undeleted volume types using the spec, oldest first. */
  async associations(db: Queryable, id: string): Promise<QosAssociation[]> {
    return rowsOf<Row>(
      await db.query(
        `SELECT id, name FROM "volume_types" WHERE qos_specs_id = $1 AND deleted = false ORDER BY created_at, id`,
        [id],
      ),
    ).map((r) => ({ id: r['id'], name: r['name'] }));
  }

  /** Points a volume type at the spec unless it already uses another one (the same one is a no-op). */
  async associate(db: Queryable, id: string, typeId: string): Promise<QosAssociateOutcome> {
    if (!UUID.test(typeId)) return 'no-type';
    const type = rowsOf<Row>(
      await db.query(
        `SELECT qos_specs_id FROM "volume_types" WHERE id = $1::uuid AND deleted = false FOR UPDATE`,
        [typeId.toLowerCase()],
      ),
    )[0];
    if (!type) return 'no-type';
    const current = type['qos_specs_id'] as string | null;
    if (current !== null && current !== id) return { otherSpecsId: current };
    if (current === null)
      await db.query(`UPDATE "volume_types" SET qos_specs_id = $1 WHERE id = $2::uuid`, [
        id,
        typeId.toLowerCase(),
      ]);
    return 'associated';
  }

  /** Unlinks one volume type from the spec (a type using another spec, or none, is left alone); false when there is no such type. */
  async disassociate(db: Queryable, id: string, typeId: string): Promise<boolean> {
    if (!UUID.test(typeId)) return false;
    const type = rowsOf(
      await db.query(`SELECT id FROM "volume_types" WHERE id = $1::uuid AND deleted = false`, [
        typeId.toLowerCase(),
      ]),
    )[0];
    if (!type) return false;
    await db.query(
      `UPDATE "volume_types" SET qos_specs_id = NULL WHERE id = $1::uuid AND qos_specs_id = $2`,
      [typeId.toLowerCase(), id],
    );
    return true;
  }

  async disassociateAll(db: Queryable, id: string): Promise<void> {
    await db.query(`UPDATE "volume_types" SET qos_specs_id = NULL WHERE qos_specs_id = $1`, [id]);
  }

  /** Soft-deletes the spec and drops its items; false when it was already gone. */
  async softDelete(db: Queryable, id: string, now: Date): Promise<boolean> {
    const done =
      affectedOf(
        await db.query(
          `UPDATE "qos_specs" SET deleted = true, deleted_at = $2 WHERE id = $1 AND deleted = false`,
          [id, now],
        ),
      ) > 0;
    if (done) await db.query(`DELETE FROM "qos_spec_items" WHERE qos_specs_id = $1`, [id]);
    return done;
  }
}
