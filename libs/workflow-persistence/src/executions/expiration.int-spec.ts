import { randomUUID } from 'node:crypto';
import {
  ENGINE_KINDS,
  type TestDataSource,
  combineMigrations,
  createTestDataSource,
  runInTransaction,
} from '@osc/persistence';
import type { SqlRunner } from './execution-rows';
import { executionMigrations } from './executions.migration';
import { type ExpirationCutoff, type ExpirationSettings, expireExecutionsBatch } from './expiration';

/** The expiration policy's batches on the database: the cutoff a pass hands on, the re-check under the row lock. */
describe.each(ENGINE_KINDS)('expireExecutionsBatch (%s)', (kind) => {
  let t: TestDataSource;

  beforeAll(async () => {
    t = await createTestDataSource(kind, { migrations: combineMigrations(executionMigrations) as never });
  });
  afterAll(async () => {
    await t?.cleanup();
  });
  beforeEach(async () => {
    await t.dataSource.query(`DELETE FROM "workflow_executions"`);
  });

  /** A root execution (or, with `root`, a sub-execution of it) in `state`, last updated `minute` minutes past 10:00. */
  const insert = async (state: string, minute: number, root?: string): Promise<string> => {
    const id = randomUUID();
    await t.dataSource.query(
      `INSERT INTO "workflow_executions" ("id", "workflow_id", "workflow_name", "project_id", "state", "spec", "task_execution_id",
                                          "parent_execution_id", "root_execution_id", "created_at", "updated_at")
       VALUES ($1, 'w', 'w', 'p', $2, '{}', $3, $4, $4, $5::timestamptz, $5::timestamptz)`,
      [
        id,
        state,
        root ? randomUUID() : null,
        root ?? null,
        `2026-01-01T10:${String(minute).padStart(2, '0')}:00.123456Z`,
      ],
    );
    return id;
  };
  const present = async (): Promise<string[]> =>
    (
      (await t.dataSource.query(`SELECT "id" FROM "workflow_executions" ORDER BY "updated_at", "id"`)) as {
        id: string;
      }[]
    ).map((r) => String(r.id));
  const settings = (s: Partial<ExpirationSettings>): ExpirationSettings => ({
    maxFinishedExecutions: 0,
    batchSize: 0,
    ignoredStates: [],
    ...s,
  });
  const batch = (s: Partial<ExpirationSettings>) =>
    runInTransaction(t.dataSource, (em) => expireExecutionsBatch(em, settings(s)));

  it('removes the executions beyond max_finished oldest first, batch after batch from the cutoff the first batch found', async () => {
    const ids: string[] = [];
    for (let m = 0; m < 7; m++) ids.push(await insert(m === 3 ? 'ERROR' : 'SUCCESS', m));
    const running = await insert('RUNNING', 1);

    const first = await batch({ maxFinishedExecutions: 3, batchSize: 2 });
    expect(first.removed).toEqual([ids[0], ids[1]]);
    expect(first.more).toBe(true);
    expect(first.cutoff).toEqual({ updatedAt: expect.any(String), id: ids[3] });

    // executions finishing meanwhile move the real limit later; the pass keeps to its cutoff
    const late = [await insert('SUCCESS', 8), await insert('SUCCESS', 9)];
    const second = await batch({ maxFinishedExecutions: 3, batchSize: 2, cutoff: first.cutoff });
    expect(second.removed).toEqual([ids[2], ids[3]]);
    expect(second.more).toBe(true);
    const third = await batch({ maxFinishedExecutions: 3, batchSize: 2, cutoff: first.cutoff });
    expect(third).toEqual({ removed: [], more: false, cutoff: first.cutoff });
    expect(await present()).toEqual([running, ids[4], ids[5], ids[6], ...late]);

    // the next pass counts again: the two late ones push two more out
    const next = await batch({ maxFinishedExecutions: 3, batchSize: 10 });
    expect(next.removed).toEqual([ids[4], ids[5]]);
    expect(next.more).toBe(false);
  });

  it('keeps the cutoff exact to the microsecond: an execution a microsecond newer than it is kept', async () => {
    const older = await insert('SUCCESS', 0);
    const kept = await insert('SUCCESS', 1);
    // one microsecond after `older`, so between the cutoff (older) and the kept one
    const close = randomUUID();
    await t.dataSource.query(
      `INSERT INTO "workflow_executions" ("id", "workflow_id", "workflow_name", "project_id", "state", "spec", "created_at", "updated_at")
       VALUES ($1, 'w', 'w', 'p', 'SUCCESS', '{}', $2::timestamptz, $2::timestamptz)`,
      [close, '2026-01-01T10:00:00.123457Z'],
    );
    const first = await batch({ maxFinishedExecutions: 2, batchSize: 1 });
    expect(first.removed).toEqual([older]);
    const cutoff: ExpirationCutoff = first.cutoff!;
    expect(cutoff.id).toBe(older);
    expect((await batch({ maxFinishedExecutions: 2, batchSize: 1, cutoff })).removed).toEqual([]);
    expect(await present()).toEqual([close, kept]);
  });

  it('never removes a root an engine brought back to life after the scan, nor its sub-executions', async () => {
    const revived = await insert('ERROR', 0);
    const sub = await insert('ERROR', 0, revived);
    const other = await insert('SUCCESS', 1);
    // A runner that, right after the candidates' scan, does what a concurrent rerun commits: the
    // root goes RUNNING before the DELETE takes its row lock.
    const result = await runInTransaction(t.dataSource, async (em) => {
      const racing: SqlRunner = {
        query: async (sql: string, params?: unknown[]) => {
          const out = await em.query(sql, params);
          if (/^\s*SELECT w\."id" FROM/.test(sql))
            await em.query(`UPDATE "workflow_executions" SET "state" = 'RUNNING' WHERE "id" = $1`, [revived]);
          return out;
        },
      } as SqlRunner;
      return expireExecutionsBatch(racing, settings({ expireBefore: new Date('2026-01-01T11:00:00Z') }));
    });
    expect(result.removed).toEqual([other]);
    expect((await present()).sort()).toEqual([revived, sub].sort());
  });

  it('never removes a root with an unfinished sub-execution; removes it with its sub-executions once they finish', async () => {
    const root = await insert('ERROR', 0);
    const sub = await insert('RUNNING', 0, root);
    expect((await batch({ expireBefore: new Date('2026-01-01T11:00:00Z') })).removed).toEqual([]);
    expect((await present()).sort()).toEqual([root, sub].sort());
    await t.dataSource.query(`UPDATE "workflow_executions" SET "state" = 'CANCELLED' WHERE "id" = $1`, [sub]);
    expect((await batch({ expireBefore: new Date('2026-01-01T11:00:00Z') })).removed).toEqual([root]);
    expect(await present()).toEqual([]);
  });
});
