import { FLUSH_STATS_SQL, type MaintenanceLogger } from '@osc/persistence';
import { createRuntime } from './runtime';

describe('embedded runtime: database maintenance', () => {
  it('vacuums the embedded database on its interval, and stops with the runtime', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger: MaintenanceLogger = {
      info: (obj) => lines.push(obj),
      warn: (obj) => lines.push({ warn: true, ...obj }),
    };
    const runtime = await createRuntime(
      { mode: 'embedded', dataDir: 'memory://', maintenanceIntervalMs: 100, logger },
      [],
    );
    const db = runtime.dataSource;
    const vacuums = async (): Promise<number> => {
      await db.query(FLUSH_STATS_SQL);
      const [row] = (await db.query(
        `SELECT vacuum_count::int AS n FROM pg_stat_user_tables WHERE relname = 'churn'`,
      )) as { n: number }[];
      return row?.n ?? 0;
    };
    try {
      await db.query('CREATE TABLE churn (id int)');
      await db.query('INSERT INTO churn SELECT generate_series(1, 5000)');
      await db.query('DELETE FROM churn');
      const deadline = Date.now() + 15_000;
      while ((await vacuums()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await vacuums()).toBe(1);
      expect(lines.filter((l) => l['warn'])).toEqual([]);
      expect(lines.find((l) => l['event'] === 'database.maintenance')?.['tables']).toContainEqual({
        table: 'public.churn',
        vacuum: true,
        analyze: true,
        reason: 'dead-rows',
      });
    } finally {
      await runtime.close();
    }
  });

  it('runs no pass when the interval is 0', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger: MaintenanceLogger = { info: (obj) => lines.push(obj), warn: (obj) => lines.push(obj) };
    const runtime = await createRuntime(
      { mode: 'embedded', dataDir: 'memory://', maintenanceIntervalMs: 0, logger },
      [],
    );
    try {
      await runtime.dataSource.query('CREATE TABLE churn (id int)');
      await runtime.dataSource.query('INSERT INTO churn SELECT generate_series(1, 5000)');
      await runtime.dataSource.query('DELETE FROM churn');
      await new Promise((r) => setTimeout(r, 500));
      expect(lines).toEqual([]);
    } finally {
      await runtime.close();
    }
  });
});
