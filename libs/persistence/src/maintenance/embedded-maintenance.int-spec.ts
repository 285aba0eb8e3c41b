import type { DataSource } from 'typeorm';
import { closeDataSource, createDataSource } from '../data-source/data-source.factory';
import { PGLITE_MEMORY } from '../data-source/pglite-instance';
import { EmbeddedMaintenance, FLUSH_STATS_SQL, type MaintenanceLogger } from './embedded-maintenance';

/** A queue-like table: every round inserts 2,000 rows and deletes them, as the message journal does. */
async function churn(ds: DataSource, rounds: number): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    await ds.query(`INSERT INTO journal (body) SELECT repeat('x', 300) FROM generate_series(1, 2000)`);
    await ds.query(`DELETE FROM journal`);
  }
}

const pages = async (ds: DataSource): Promise<number> =>
  Number(((await ds.query(`SELECT pg_relation_size('journal') / 8192 AS n`)) as [{ n: string }])[0].n);

const stats = async (ds: DataSource) => {
  await ds.query(FLUSH_STATS_SQL);
  return (
    (await ds.query(
      `SELECT n_dead_tup::int AS dead, vacuum_count::int AS vacuums, autovacuum_count::int AS autovacuums
         FROM pg_stat_user_tables WHERE relname = 'journal'`,
    )) as { dead: number; vacuums: number; autovacuums: number }[]
  )[0];
};

describe('embedded database maintenance (PGlite runs no autovacuum)', () => {
  let ds: DataSource;
  const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const logger: MaintenanceLogger = {
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
  };

  beforeEach(async () => {
    lines.length = 0;
    ds = await createDataSource({ kind: 'pglite', dataDir: PGLITE_MEMORY }, [], []);
    await ds.query(`CREATE TABLE journal (id bigserial PRIMARY KEY, body text NOT NULL)`);
  });
  afterEach(async () => {
    await closeDataSource(ds);
  });

  it('finds a table with churn that nothing vacuumed, vacuums it, and its space is used again', async () => {
    await churn(ds, 5);
    const grown = await pages(ds);
    // nothing else ever vacuums it: the dead rows stay and the table only grows
    expect(await stats(ds)).toEqual({ dead: 10_000, vacuums: 0, autovacuums: 0 });
    await churn(ds, 5);
    expect(await pages(ds)).toBeGreaterThanOrEqual(2 * grown - 1);

    const maintenance = new EmbeddedMaintenance(ds, { intervalMs: 0, logger });
    const steps = await maintenance.pass();
    expect(steps).toContainEqual({
      table: 'public.journal',
      vacuum: true,
      analyze: true,
      reason: 'dead-rows',
    });
    expect(await stats(ds)).toMatchObject({ dead: 0, vacuums: 1 });
    // an empty table's pages are given back; the next rounds reuse the space a pass frees
    expect(await pages(ds)).toBe(0);
    for (let i = 0; i < 4; i++) {
      await churn(ds, 5);
      await maintenance.pass();
    }
    expect(await pages(ds)).toBeLessThanOrEqual(grown);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
    expect(lines[0]).toMatchObject({
      level: 'info',
      msg: 'embedded database maintained',
      obj: { event: 'database.maintenance' },
    });
    expect(lines[0]!.obj['tables']).toContainEqual({
      table: 'public.journal',
      vacuum: true,
      analyze: true,
      reason: 'dead-rows',
    });
  });

  it('leaves a database with nothing due alone, and a second pass right after finds nothing', async () => {
    const maintenance = new EmbeddedMaintenance(ds, { intervalMs: 0, logger });
    await churn(ds, 1);
    await maintenance.pass();
    expect(await maintenance.pass()).toEqual([]);
  });

  it('runs on its own every interval until stopped', async () => {
    const maintenance = new EmbeddedMaintenance(ds, { intervalMs: 100, logger });
    maintenance.start();
    try {
      await churn(ds, 2);
      const deadline = Date.now() + 10_000;
      while ((await stats(ds))!.vacuums === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      expect((await stats(ds))!.vacuums).toBe(1);
    } finally {
      await maintenance.stop();
    }
    await churn(ds, 2);
    await new Promise((r) => setTimeout(r, 400));
    expect(await stats(ds)).toMatchObject({ dead: 4000, vacuums: 1 });
  });

  it('logs a table it cannot maintain and goes on with the others', async () => {
    await churn(ds, 1);
    const failing = {
      query: (sql: string): Promise<unknown> =>
        sql.includes('journal') && sql.startsWith('VACUUM')
          ? Promise.reject(new Error('disk full'))
          : ds.query(sql),
    };
    await ds.query(`CREATE TABLE other (id int)`);
    await ds.query(`INSERT INTO other SELECT generate_series(1, 2000)`);
    await ds.query(`DELETE FROM other`);
    const steps = await new EmbeddedMaintenance(failing, { intervalMs: 0, logger }).pass();
    expect(steps.map((s) => s.table)).toContain('public.other');
    expect(steps.map((s) => s.table)).not.toContain('public.journal');
    expect(lines.find((l) => l.level === 'warn')).toMatchObject({
      obj: { table: 'public.journal', statement: 'VACUUM (ANALYZE) public.journal' },
    });
  });
});
