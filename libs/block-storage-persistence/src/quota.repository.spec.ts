import { QuotaRepository } from './quota.repository';
import type { Queryable } from './sql';

/** A Queryable that records the statements and answers every SELECT with no rows. */
const recorder = (): Queryable & { statements: { sql: string; params: unknown[] }[] } => {
  const statements: { sql: string; params: unknown[] }[] = [];
  return {
    statements,
    query: async (sql: string, params: unknown[] = []) => {
      statements.push({ sql, params });
      return [];
    },
  } as never;
};

describe('QuotaRepository lock order', () => {
  it('renames per-type usage rows in the order apply locks them (sorted by resource), so the two cannot deadlock', async () => {
    const db = recorder();
    await new QuotaRepository().renameTypeKeys(db, 'old', 'new');
    const usageRenames = db.statements
      .filter((s) => s.sql.startsWith('UPDATE "quota_usages"'))
      .map((s) => s.params[1] as string);
    expect(usageRenames).toEqual(['gigabytes_old', 'snapshots_old', 'volumes_old']);
    expect(usageRenames).toEqual([...usageRenames].sort());
  });

  it('locks the usage rows of a create sorted by resource', async () => {
    const db = recorder();
    await new QuotaRepository().apply(
      db,
      'p',
      [
        { resource: 'volumes', delta: 1 },
        { resource: 'gigabytes_t', delta: 1 },
        { resource: 'gigabytes', delta: 1 },
      ],
      'in_use',
      false,
    );
    const lock = db.statements.find((s) => s.sql.includes('FOR UPDATE'));
    expect(lock?.params[1]).toEqual(['gigabytes', 'gigabytes_t', 'volumes']);
    expect(lock?.sql).toContain('ORDER BY resource FOR UPDATE');
  });

  it('settles a reservation row by row in lock order', async () => {
    const db = recorder();
    await new QuotaRepository().settleReserved(
      db,
      'p',
      [
        { resource: 'volumes_t', delta: 1 },
        { resource: 'gigabytes', delta: 2 },
        { resource: 'volumes', delta: 1 },
      ],
      true,
    );
    expect(db.statements.map((s) => s.params[3] ?? s.params[2])).toEqual([
      'gigabytes',
      'volumes',
      'volumes_t',
    ]);
  });
});
