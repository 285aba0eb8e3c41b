import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createEngineDatabase } from '../../test/engine-harness';
import { ActionClaims } from './action-claims';

/** Claims batched into one statement keep the one-at-a-time answers (PostgreSQL). */
describe('ActionClaims', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createEngineDatabase();
    ds = db.dataSource;
  }, 30_000);
  afterAll(async () => db?.drop());

  /** An action row of a workflow execution, or (`standalone`) of POST /v2/action_executions. */
  const action = async (state = 'RUNNING', accepted = true, standalone = false): Promise<string> => {
    const id = randomUUID();
    await ds.query(
      `INSERT INTO "action_executions" ("id", "name", "workflow_execution_id", "project_id", "state", "accepted", "created_at")
       VALUES ($1, 'std.echo', $2, 'p', $3, $4, now())`,
      [id, standalone ? null : randomUUID(), state, accepted],
    );
    return id;
  };

  it('claims many actions at once: free ones once, completed or superseded ones never', async () => {
    const claims = new ActionClaims(ds, 50);
    const free = await Promise.all(Array.from({ length: 120 }, () => action()));
    const done = await action('SUCCESS');
    const superseded = await action('RUNNING', false);
    // a standalone run is not accepted until done (as Mistral shows it), yet free to claim
    const standalone = await action('RUNNING', false, true);
    const standaloneDone = await action('SUCCESS', true, true);
    const answers = await Promise.all(
      [...free, done, superseded, standalone, standaloneDone].map((id) => claims.claim(id)),
    );
    expect(answers.slice(0, 120).every((a) => a !== undefined && a.prev === null)).toBe(true);
    expect(answers.slice(120)).toEqual([undefined, undefined, { prev: null }, undefined]);
    const [{ n }] = (await ds.query(
      `SELECT count(*)::int AS n FROM "action_executions" WHERE "claimed_at" IS NOT NULL`,
    )) as [{ n: number }];
    expect(n).toBe(121);
  });

  it('a second claim of the same action finds the first, in the same batch or later', async () => {
    const claims = new ActionClaims(ds);
    const id = await action();
    const [first, twin] = await Promise.all([claims.claim(id), claims.claim(id)]);
    expect(first).toEqual({ prev: null });
    expect(twin?.prev).not.toBeNull();
    const later = await claims.claim(id);
    expect(later?.prev).not.toBeNull();
  });
});
