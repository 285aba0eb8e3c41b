import { QueryFailedError } from 'typeorm';
import { ENGINE_KINDS, type TestDataSource, createTestDataSource } from '@osc/persistence';
import { findWorkflowForRun } from '../definitions/definition-lookups';
import { definitionEntities } from '../definitions/definition.entities';
import { WORKFLOW_DEFINITIONS } from '../definitions/definition-tables';
import { insertDefinition } from '../definitions/definition-store';
import { definitionMigrations } from '../definitions/definitions.migration';
import { queryNamed } from './prepared-statements';

const NOW = '2024-05-01T10:00:00Z';

/**
 * The API's per-request statements (the workflow lookup and the insert of POST /v2/executions) run as
 * named prepared statements: the same rows and errors as `query`, planned once per session on
 * PostgreSQL; as before on the embedded engine.
 */
describe.each(ENGINE_KINDS)('queryNamed (%s)', (kind) => {
  let t: TestDataSource;
  let wfId: string;

  beforeAll(async () => {
    t = await createTestDataSource(kind, { entities: definitionEntities, migrations: definitionMigrations });
    wfId = String(
      (await insertDefinition(t.dataSource, WORKFLOW_DEFINITIONS, {
        name: { value: 'wf' },
        namespace: { value: '' },
        project_id: { value: 'p1' },
        scope: { value: 'private' },
        definition: { value: 'def wf' },
        checksum: { value: 'c' },
        spec: { value: { name: 'wf', tasks: { a: {} } }, kind: 'json' as const },
        input: { value: '' },
        interface: { value: '{"input": [], "output": []}' },
        tags: { value: [], kind: 'json' as const },
        created_at: { value: NOW, kind: 'timestamp' as const },
      }))!.id,
    );
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const lookup = {
    namespace: '',
    projectId: 'p1',
    visibility: { kind: 'project', projectId: 'p1' },
  } as const;
  const named = (db: { query(sql: string): Promise<unknown> }) =>
    db.query(
      `SELECT "name", "generic_plans"::int AS "generic", "custom_plans"::int AS "custom" FROM pg_prepared_statements WHERE "name" LIKE 'osc_named_%'`,
    ) as Promise<{ name: string; generic: number; custom: number }[]>;

  it('finds the same rows, by name and by id, through the pool and in a transaction', async () => {
    const expected = {
      id: wfId,
      name: 'wf',
      namespace: '',
      projectId: 'p1',
      scope: 'private',
      spec: { name: 'wf', tasks: { a: {} } },
    };
    for (let i = 0; i < 3; i++) {
      expect(await findWorkflowForRun(t.dataSource, { ...lookup, identifier: 'wf' })).toEqual(expected);
      expect(await findWorkflowForRun(t.dataSource, { ...lookup, identifier: wfId })).toEqual(expected);
      expect(await findWorkflowForRun(t.dataSource, { ...lookup, identifier: 'other' })).toBeNull();
    }
    expect(
      await findWorkflowForRun(t.dataSource, {
        ...lookup,
        projectId: 'p2',
        visibility: { kind: 'project', projectId: 'p2' },
        identifier: 'wf',
      }),
    ).toBeNull();
    // in a transaction: on its connection, seeing what it wrote and has not committed
    await t.dataSource
      .transaction(async (em) => {
        await em.query(`UPDATE "workflow_definitions" SET "scope" = 'public' WHERE "id" = $1`, [wfId]);
        expect(
          await findWorkflowForRun(em, {
            ...lookup,
            projectId: 'p2',
            visibility: { kind: 'project', projectId: 'p2' },
            identifier: 'wf',
          }),
        ).toMatchObject({ id: wfId, scope: 'public' });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await findWorkflowForRun(t.dataSource, { ...lookup, identifier: 'wf' })).toMatchObject({
      scope: 'private',
    });
  });

  it('plans a statement once per session on PostgreSQL; sends it as before on the embedded engine', async () => {
    const seen = await t.dataSource.transaction(async (em) => {
      for (let i = 0; i < 10; i++) await findWorkflowForRun(em, { ...lookup, identifier: 'wf' });
      return named(em);
    });
    if (kind === 'pglite') {
      expect(seen).toEqual([]);
      return;
    }
    // PostgreSQL plans the first five runs for their values, then keeps one generic plan
    const [lookupStatement] = seen.filter((s) => s.generic + s.custom >= 10);
    expect(lookupStatement).toBeDefined();
    expect(lookupStatement!.custom).toBeLessThanOrEqual(5);
    expect(lookupStatement!.generic).toBeGreaterThanOrEqual(5);
  });

  it('fails as query does: a QueryFailedError with the driver error', async () => {
    for (const db of [t.dataSource, t.dataSource.manager]) {
      const failed = await queryNamed(db, `SELECT $1::uuid AS "id"`, ['not-a-uuid']).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(QueryFailedError);
      expect((failed as QueryFailedError & { driverError: { code?: string } }).driverError.code).toBe(
        '22P02',
      );
      // the connection is fine afterwards
      expect(await queryNamed(db, `SELECT $1::uuid AS "id"`, [wfId])).toEqual([{ id: wfId }]);
    }
    // a query runner runs it itself, as before
    const qr = t.dataSource.createQueryRunner();
    try {
      expect(await queryNamed(qr, `SELECT $1::int + 1 AS "n"`, [1])).toEqual([{ n: 2 }]);
    } finally {
      await qr.release();
    }
  });
});
