import { InternalError } from '@osc/errors';
import { Column, Entity, type MigrationInterface, PrimaryColumn, type QueryRunner } from 'typeorm';
import { createTestDataSource, ENGINE_KINDS, type TestDataSource } from '../testing/test-data-source';
import { runInTransaction } from './transaction';

@Entity({ name: 'ds_item' })
class DsItem {
  @PrimaryColumn({ type: 'uuid', default: () => 'gen_random_uuid()' })
  id!: string;
  @Column({ type: 'text' })
  name!: string;
  @Column({ type: 'jsonb', nullable: true })
  payload!: unknown;
  @Column({ type: 'text', name: 'claimed_by', nullable: true })
  claimedBy!: string | null;
  @Column({ type: 'timestamptz', name: 'created_at', default: () => 'now()' })
  createdAt!: Date;
}

class CreateDsItem1700000000001 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE ds_item (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      payload jsonb,
      claimed_by text,
      created_at timestamptz NOT NULL DEFAULT now())`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ds_item');
  }
}

class CreateDsCounter1700000000002 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE ds_counter (id int PRIMARY KEY, n int NOT NULL)');
    await q.query('INSERT INTO ds_counter VALUES (1, 0)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ds_counter');
  }
}

const count = async (t: TestDataSource): Promise<number> => {
  const [row] = (await t.dataSource.query('SELECT count(*)::int AS n FROM ds_item')) as { n: number }[];
  return row!.n;
};

describe.each(ENGINE_KINDS)('data source on %s', (kind) => {
  let t: TestDataSource;
  beforeAll(async () => {
    t = await createTestDataSource(kind, {
      entities: [DsItem],
      migrations: [CreateDsItem1700000000001, CreateDsCounter1700000000002],
    });
  });
  afterAll(async () => {
    await t?.cleanup();
  });
  beforeEach(async () => {
    await t.dataSource.query('DELETE FROM ds_item');
  });

  it('applies the migrations once and records them', async () => {
    const rows = (await t.dataSource.query('SELECT name FROM migrations ORDER BY timestamp')) as {
      name: string;
    }[];
    expect(rows.map((r) => r.name)).toEqual(['CreateDsItem1700000000001', 'CreateDsCounter1700000000002']);
    expect(await t.dataSource.showMigrations()).toBe(false);
  });

  it('generates uuids with gen_random_uuid() and has pgcrypto', async () => {
    const saved = await t.dataSource.getRepository(DsItem).save({ name: 'a' });
    expect(saved.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const [ext] = (await t.dataSource.query(
      "SELECT extname FROM pg_extension WHERE extname = 'pgcrypto'",
    )) as { extname: string }[];
    expect(ext?.extname).toBe('pgcrypto');
  });

  it('round-trips jsonb values and returns timestamps as Dates', async () => {
    const payload = { s: 'it\'s "quoted" ünïcødé', n: 1.5, a: [1, null, { b: true }], nested: { e: {} } };
    const repo = t.dataSource.getRepository(DsItem);
    const { id } = await repo.save({ name: 'json', payload });
    const loaded = await repo.findOneByOrFail({ id });
    expect(loaded.payload).toEqual(payload);
    expect(loaded.createdAt).toBeInstanceOf(Date);
    const raw = (await t.dataSource.query("SELECT payload->'a'->2->>'b' AS b, $1::int8 AS big FROM ds_item", [
      '9007199254740993',
    ])) as { b: string; big: string }[];
    expect(raw[0]).toEqual({ b: 'true', big: '9007199254740993' });
  });

  it('rolls a transaction back when its callback throws', async () => {
    await expect(
      runInTransaction(t.dataSource, async (em) => {
        await em.insert(DsItem, { name: 'doomed' });
        expect(await em.count(DsItem)).toBe(1);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await count(t)).toBe(0);
  });

  it('commits a transaction and returns its result', async () => {
    const id = await runInTransaction(t.dataSource, async (em) => {
      const r = await em.insert(DsItem, { name: 'kept' });
      return (r.identifiers[0] as { id: string }).id;
    });
    expect(await t.dataSource.getRepository(DsItem).findOneBy({ id })).toMatchObject({ name: 'kept' });
  });

  it('hides uncommitted rows from concurrent readers', async () => {
    let inserted!: () => void;
    const insertedP = new Promise<void>((r) => (inserted = r));
    let finish!: () => void;
    const finishP = new Promise<void>((r) => (finish = r));
    const writer = t.dataSource.transaction(async (em) => {
      await em.insert(DsItem, { name: 'uncommitted' });
      inserted();
      await finishP;
      throw new Error('rollback');
    });
    await insertedP;
    const reader = count(t);
    if (kind === 'postgres') {
      // A second connection reads while the writer is still open.
      expect(await reader).toBe(0);
      finish();
    } else {
      // The single embedded session is lent to the reader only after the writer finished.
      finish();
      expect(await reader).toBe(0);
    }
    await expect(writer).rejects.toThrow('rollback');
    expect(await count(t)).toBe(0);
  });

  it('serialises read-modify-write under SELECT FOR UPDATE', async () => {
    await t.dataSource.query('UPDATE ds_counter SET n = 0');
    await Promise.all(
      Array.from({ length: 20 }, () =>
        runInTransaction(t.dataSource, async (em) => {
          const [row] = (await em.query('SELECT n FROM ds_counter WHERE id = 1 FOR UPDATE')) as {
            n: number;
          }[];
          await em.query('UPDATE ds_counter SET n = $1 WHERE id = 1', [row!.n + 1]);
        }),
      ),
    );
    const [row] = (await t.dataSource.query('SELECT n FROM ds_counter')) as { n: number }[];
    expect(row!.n).toBe(20);
  });

  it('claims every row exactly once with FOR UPDATE SKIP LOCKED', async () => {
    await t.dataSource.query(
      "INSERT INTO ds_item (name) SELECT 'job-' || g FROM generate_series(1, 40) AS g",
    );
    const claims: string[] = [];
    const worker = async (name: string): Promise<void> => {
      for (;;) {
        const claimed = await runInTransaction(t.dataSource, async (em) => {
          const rows = (await em.query(
            'SELECT id FROM ds_item WHERE claimed_by IS NULL ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED',
          )) as { id: string }[];
          const row = rows[0];
          if (!row) return undefined;
          const [, affected] = (await em.query(
            'UPDATE ds_item SET claimed_by = $1 WHERE id = $2 AND claimed_by IS NULL',
            [name, row.id],
          )) as [unknown, number];
          expect(affected).toBe(1);
          return row.id;
        });
        if (claimed === undefined) return;
        claims.push(claimed);
      }
    };
    await Promise.all(Array.from({ length: 6 }, (_, i) => worker(`w${i}`)));
    expect(claims).toHaveLength(40);
    expect(new Set(claims).size).toBe(40);
    const [left] = (await t.dataSource.query(
      'SELECT count(*)::int AS n FROM ds_item WHERE claimed_by IS NULL',
    )) as { n: number }[];
    expect(left!.n).toBe(0);
  });

  it('keeps working after failed queries, inside and outside transactions', async () => {
    await expect(t.dataSource.query('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
    await expect(t.dataSource.query('SELECT $1::int AS n', ['not a number'])).rejects.toThrow(/integer/);
    await expect(
      runInTransaction(t.dataSource, async (em) => {
        await em.insert(DsItem, { name: 'before-error' });
        await em.query('SELECT 1/0');
      }),
    ).rejects.toThrow(/division by zero/);
    expect(await count(t)).toBe(0);
    expect(await t.dataSource.query('SELECT $1::int + 1 AS n', [41])).toEqual([{ n: 42 }]);
  });

  it('treats a compare-and-set update that matches nothing as zero affected rows', async () => {
    const { id } = await t.dataSource.getRepository(DsItem).save({ name: 'cas' });
    const first = await t.dataSource
      .createQueryBuilder()
      .update(DsItem)
      .set({ claimedBy: 'a' })
      .where('id = :id AND claimed_by IS NULL', { id })
      .execute();
    const second = await t.dataSource
      .createQueryBuilder()
      .update(DsItem)
      .set({ claimedBy: 'b' })
      .where('id = :id AND claimed_by IS NULL', { id })
      .execute();
    expect([first.affected, second.affected]).toEqual([1, 0]);
  });

  if (kind === 'pglite') {
    it('turns a query outside the transaction manager into an error instead of a deadlock', async () => {
      await expect(
        runInTransaction(t.dataSource, async () => {
          await t.dataSource.query('SELECT 1');
        }),
      ).rejects.toBeInstanceOf(InternalError);
      expect(await t.dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    });

    it('rolls back a transaction left open by a released query runner', async () => {
      const runner = t.dataSource.createQueryRunner();
      await runner.startTransaction();
      await runner.query("INSERT INTO ds_item (name) VALUES ('abandoned')");
      await runner.release();
      expect(await count(t)).toBe(0);
      await runInTransaction(t.dataSource, (em) => em.insert(DsItem, { name: 'next' }));
      expect(await count(t)).toBe(1);
    });
  } else {
    it('lets a query outside the transaction use another connection', async () => {
      await runInTransaction(t.dataSource, async (em) => {
        await em.insert(DsItem, { name: 'inside' });
        expect(await count(t)).toBe(0);
      });
      expect(await count(t)).toBe(1);
    });
  }
});
