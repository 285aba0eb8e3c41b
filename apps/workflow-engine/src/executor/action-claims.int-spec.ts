import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
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
  const action = async (
    state = 'RUNNING',
    accepted = true,
    standalone = false,
    into: DataSource = ds,
  ): Promise<string> => {
    const id = randomUUID();
    await into.query(
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

  it("the claims asked in one turn go in one statement (a batch job's runs)", async () => {
    const claims = new ActionClaims(ds);
    const statements = jest.spyOn(claims as unknown as { run: () => Promise<unknown> }, 'run');
    const ids = await Promise.all(Array.from({ length: 50 }, () => action()));
    const answers = await Promise.all(ids.map((id) => claims.claim(id)));
    expect(answers.every((a) => a?.prev === null)).toBe(true);
    expect(statements).toHaveBeenCalledTimes(1);
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

  it('claims through a statement prepared once per session, with a generic plan that reads by index', async () => {
    // one connection: the statement prepared by the claims is on the session the test looks at; an
    // empty database: the plan is made once and kept, and on empty tables a sequential scan looks
    // cheapest
    const empty = await createEngineDatabase();
    const single = new DataSource({ type: 'postgres', url: empty.url, extra: { max: 1 } });
    await single.initialize();
    try {
      const claims = new ActionClaims(single);
      expect(await claims.claim(randomUUID())).toBeUndefined();
      for (let i = 0; i < 2; i++)
        expect(await claims.claim(await action('RUNNING', true, false, single))).toEqual({ prev: null });
      const [plans] = (await single.query(
        `SELECT "generic_plans", "custom_plans" FROM pg_prepared_statements WHERE "name" = 'osc_action_claim'`,
      )) as { generic_plans: string; custom_plans: string }[];
      expect([Number(plans!.generic_plans), Number(plans!.custom_plans)]).toEqual([3, 0]);
      // the plan kept reads by index
      const plan = await single.transaction(async (em) => {
        await em.query('SET LOCAL plan_cache_mode = force_generic_plan');
        return (
          (await em.query(`EXPLAIN EXECUTE osc_action_claim('{}', NULL, '{}')`)) as { 'QUERY PLAN': string }[]
        )
          .map((r) => r['QUERY PLAN'])
          .join('\n');
      });
      expect(plan).toMatch(/Index Scan on "PK_action_executions"/);
      expect(plan).not.toMatch(/Seq Scan on action_executions/);
    } finally {
      await single.destroy();
      await empty.drop();
    }
  });
});
