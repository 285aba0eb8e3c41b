import { ENGINE_KINDS, type TestDataSource, createTestDataSource, runInTransaction } from '@osc/persistence';
import { definitionEntities } from './definition.entities';
import { definitionMigrations } from './definitions.migration';
import { ACTION_DEFINITIONS, WORKFLOW_DEFINITIONS } from './definition-tables';
import {
  type ListQuery,
  deleteDefinition,
  findDefinition,
  insertDefinition,
  listDefinitions,
  listDefinitionsJson,
  markerValues,
  updateDefinition,
  upsertDefinition,
} from './definition-store';
import { syncSystemActions } from './definition-lookups';

const T = WORKFLOW_DEFINITIONS;

const wf = (
  name: string,
  project: string,
  at: string,
  extra: Record<string, { value: unknown; kind?: 'json' | 'timestamp' }> = {},
) => ({
  name: { value: name },
  namespace: { value: '' },
  project_id: { value: project },
  scope: { value: 'private' },
  definition: { value: `def ${name}` },
  checksum: { value: 'c' },
  spec: { value: { name }, kind: 'json' as const },
  input: { value: '' },
  interface: { value: '{"input": [], "output": []}' },
  tags: { value: [], kind: 'json' as const },
  created_at: { value: at, kind: 'timestamp' as const },
  ...extra,
});

/** The definitions store conformance suite, on both engines. */
describe.each(ENGINE_KINDS)('definitions store (%s)', (kind) => {
  let t: TestDataSource;

  beforeAll(async () => {
    t = await createTestDataSource(kind, { entities: definitionEntities, migrations: definitionMigrations });
    const db = t.dataSource;
    // Ten rows over three seconds, two projects, one public, some updated.
    for (let i = 0; i < 10; i++) {
      const at = `2024-01-01T00:00:0${i % 3}Z`;
      const row = await insertDefinition(
        db,
        T,
        wf(`w${i}`, i % 2 ? 'p2' : 'p1', at, i === 3 ? { scope: { value: 'public' } } : {}),
      );
      if (i % 4 === 0)
        await updateDefinition(db, T, String(row!.id), {
          updated_at: { value: `2024-02-0${i + 1}T00:00:00Z`, kind: 'timestamp' },
        });
    }
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const all = (q: Partial<ListQuery>): ListQuery => ({
    visibility: { kind: 'all' },
    filters: [],
    sort: [{ key: 'id', dir: 'asc' }],
    limit: 1000,
    fields: [],
    ...q,
  });

  it('renders wire values and refuses a duplicate (project, namespace, name) without aborting', async () => {
    const [row] = await listDefinitions(
      t.dataSource,
      T,
      all({ filters: [{ field: 'name', op: 'eq', value: 'w4' }] }),
    );
    expect(row).toMatchObject({
      name: 'w4',
      created_at: '2024-01-01 00:00:01',
      updated_at: '2024-02-05 00:00:00',
      tags: [],
    });
    await runInTransaction(t.dataSource, async (em) => {
      expect(await insertDefinition(em, T, wf('w4', 'p1', '2024-01-01T00:00:00Z'))).toBeNull();
      expect(await insertDefinition(em, T, wf('w4', 'p3', '2024-01-01T00:00:00Z'))).not.toBeNull();
      throw new Error('roll back');
    }).catch((e: Error) => expect(e.message).toBe('roll back'));
    expect(
      await listDefinitions(t.dataSource, T, all({ filters: [{ field: 'name', op: 'eq', value: 'w4' }] })),
    ).toHaveLength(1);
  });

  it.each([
    [
      [
        { key: 'created_at', dir: 'asc' },
        { key: 'id', dir: 'asc' },
      ],
    ],
    [
      [
        { key: 'created_at', dir: 'desc' },
        { key: 'id', dir: 'asc' },
      ],
    ],
    [
      [
        { key: 'updated_at', dir: 'asc' },
        { key: 'name', dir: 'desc' },
        { key: 'id', dir: 'asc' },
      ],
    ],
    [
      [
        { key: 'updated_at', dir: 'desc' },
        { key: 'id', dir: 'desc' },
      ],
    ],
    [
      [
        { key: 'project_id', dir: 'desc' },
        { key: 'created_at', dir: 'asc' },
        { key: 'id', dir: 'asc' },
      ],
    ],
  ] as const)('pages through every row exactly once in the order of %j', async (sort) => {
    const full = (await listDefinitions(t.dataSource, T, all({ sort }))).map((r) => r.id);
    for (const limit of [1, 3, 4]) {
      const seen: unknown[] = [];
      let after: Record<string, string | null> | undefined;
      for (;;) {
        const page = await listDefinitions(
          t.dataSource,
          T,
          all({ sort, limit, ...(after ? { after } : {}) }),
        );
        seen.push(...page.map((r) => r.id));
        if (page.length < limit) break;
        after = (await markerValues(
          t.dataSource,
          T,
          String(page[page.length - 1]!.id),
          sort.map((s) => s.key),
          { kind: 'all' },
        ))!;
      }
      expect(seen).toEqual(full);
    }
  });

  it('applies visibility, operators and the JSON rendering of a page', async () => {
    const p1 = await listDefinitions(
      t.dataSource,
      T,
      all({
        visibility: { kind: 'project', projectId: 'p1' },
        sort: [
          { key: 'name', dir: 'asc' },
          { key: 'id', dir: 'asc' },
        ],
      }),
    );
    expect(p1.map((r) => r.name)).toEqual(['w0', 'w2', 'w3', 'w4', 'w6', 'w8']);
    const page = await listDefinitionsJson(
      t.dataSource,
      T,
      all({
        fields: ['id', 'name'],
        filters: [{ field: 'name', op: 'in', value: ['w1', 'w2'] }],
        sort: [
          { key: 'name', dir: 'desc' },
          { key: 'id', dir: 'asc' },
        ],
      }),
    );
    expect(page.count).toBe(2);
    const items = JSON.parse(page.json) as { id: string; name: string }[];
    expect(items.map((i) => i.name)).toEqual(['w2', 'w1']);
    expect(page.lastId).toBe(items[1]!.id);
    expect(
      await listDefinitionsJson(
        t.dataSource,
        T,
        all({ filters: [{ field: 'name', op: 'eq', value: 'none' }] }),
      ),
    ).toEqual({ json: '[]', count: 0, lastId: null });
    const since = await listDefinitions(
      t.dataSource,
      T,
      all({ filters: [{ field: 'created_at', op: 'gte', value: '2024-01-01T00:00:02Z' }] }),
    );
    expect(since.map((r) => r.name).sort()).toEqual(['w2', 'w5', 'w8']);
  });

  it('finds by name preferring the namespace order and the caller, or by id', async () => {
    const db = t.dataSource;
    const ns = await insertDefinition(
      db,
      T,
      wf('w0', 'p1', '2024-01-01T00:00:00Z', { namespace: { value: 'ns' } }),
    );
    const find = (namespaces: string[], caller = 'p1') =>
      findDefinition(db, T, {
        identifier: 'w0',
        identifierIsId: false,
        namespaces,
        visibility: { kind: 'all' },
        callerProjectId: caller,
        fields: ['id', 'namespace'],
      });
    expect((await find(['ns', '']))?.id).toBe(ns!.id);
    expect((await find(['']))?.namespace).toBe('');
    expect(await find(['other'])).toBeNull();
    const byId = await findDefinition(db, T, {
      identifier: String(ns!.id),
      identifierIsId: true,
      namespaces: [],
      visibility: { kind: 'project', projectId: 'p1' },
      callerProjectId: 'p1',
    });
    expect(byId?.name).toBe('w0');
    expect(await deleteDefinition(db, T, String(ns!.id))).toBe(true);
    expect(await deleteDefinition(db, T, String(ns!.id))).toBe(false);
  });

  it('upserts by (project, namespace, name) keeping id and creation time', async () => {
    const db = t.dataSource;
    const values = (definition: string) => {
      const { created_at: _created, ...rest } = wf('u1', 'p1', '2024-03-01T00:00:00Z', {
        definition: { value: definition },
      });
      return rest;
    };
    const first = await upsertDefinition(
      db,
      T,
      values('old'),
      { created_at: { value: '2024-03-01T00:00:00Z', kind: 'timestamp' } },
      { updated_at: { value: '2024-03-02T00:00:00Z', kind: 'timestamp' } },
    );
    expect(first.updated_at).toBeNull();
    const again = await upsertDefinition(
      db,
      T,
      values('new'),
      { created_at: { value: '2024-03-05T00:00:00Z', kind: 'timestamp' } },
      { updated_at: { value: '2024-03-06T00:00:00Z', kind: 'timestamp' } },
    );
    expect(again).toMatchObject({
      id: first.id,
      definition: 'new',
      created_at: '2024-03-01 00:00:00',
      updated_at: '2024-03-06 00:00:00',
    });
  });

  it('synchronises system actions idempotently', async () => {
    const db = t.dataSource;
    const now = new Date('2024-04-01T00:00:00Z');
    await syncSystemActions(
      db,
      [
        { name: 'std.a', description: 'A', input: 'x' },
        { name: 'std.b', description: 'B', input: '' },
      ],
      now,
    );
    const before = await listDefinitions(
      db,
      ACTION_DEFINITIONS,
      all({
        sort: [
          { key: 'name', dir: 'asc' },
          { key: 'id', dir: 'asc' },
        ],
      }),
    );
    await syncSystemActions(
      db,
      [{ name: 'std.a', description: 'A2', input: 'x' }],
      new Date('2024-05-01T00:00:00Z'),
    );
    const after = await listDefinitions(
      db,
      ACTION_DEFINITIONS,
      all({
        sort: [
          { key: 'name', dir: 'asc' },
          { key: 'id', dir: 'asc' },
        ],
      }),
    );
    expect(after).toEqual([{ ...before[0], description: 'A2' }]);
    expect(after[0]).toMatchObject({
      is_system: true,
      project_id: null,
      scope: 'public',
      created_at: '2024-04-01 00:00:00',
    });
  });
});
