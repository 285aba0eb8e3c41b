import { NotFoundError } from '@osc/errors';
import { ENGINE_KINDS, type TestDataSource, createTestDataSource } from '@osc/persistence';
import { environmentEntities } from '../environments/environment.entity';
import { environmentMigrations } from '../environments/environments.migration';
import { type RunListQuery, type RunTable, listRuns } from './run-list';

/** Any project-owned table with a scope serves: the environments, with the kinds the test needs. */
const ENVIRONMENTS: RunTable = {
  table: 'environments',
  model: 'Environment',
  columns: Object.fromEntries(
    (
      [
        ['id', 'uuid', false],
        ['name', 'text', false],
        ['description', 'text', true],
        ['variables', 'json', true],
        ['created_at', 'timestamp', false],
      ] as const
    ).map(([column, kind, nullable]) => [column, { column, kind, nullable }]),
  ),
};

const page = (over: Partial<RunListQuery>): RunListQuery => ({
  project: 'p1',
  nulls: [],
  filters: [],
  sort: [
    { key: 'created_at', dir: 'asc' },
    { key: 'id', dir: 'asc' },
  ],
  limit: 100,
  markerProject: null,
  ...over,
});

/** listRuns: visibility, public rows, filters, nulls and the keyset marker, on both engines. */
describe.each(ENGINE_KINDS)('listRuns (%s)', (kind) => {
  let t: TestDataSource;
  const names = async (q: Partial<RunListQuery>): Promise<string[]> =>
    (await listRuns(t.dataSource, ENVIRONMENTS, page(q), ['name'])).map((r) => String(r['name']));

  beforeAll(async () => {
    t = await createTestDataSource(kind, {
      entities: environmentEntities,
      migrations: environmentMigrations,
    });
    const rows: [string, string, string, string | null, string][] = [
      ['a', 'p1', 'private', 'one', '2024-05-01T10:00:01Z'],
      ['b', 'p1', 'public', null, '2024-05-01T10:00:02Z'],
      ['c', 'p2', 'public', 'three', '2024-05-01T10:00:03Z'],
      ['d', 'p2', 'private', null, '2024-05-01T10:00:04Z'],
    ];
    for (const [name, project, scope, description, at] of rows)
      await t.dataSource.query(
        `INSERT INTO "environments" ("name", "project_id", "scope", "description", "variables", "created_at")
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::timestamptz)`,
        [name, project, scope, description, JSON.stringify({ n: name }), at],
      );
  });
  afterAll(() => t.cleanup());

  it('lists one project, or every project', async () => {
    expect(await names({})).toEqual(['a', 'b']);
    expect(await names({ project: null })).toEqual(['a', 'b', 'c', 'd']);
  });

  it('admits public rows through the first project condition naming the caller', async () => {
    expect(await names({ publicToo: 'p1' })).toEqual(['a', 'b', 'c']);
    // the project filter comes first: it is the one widened, the visibility still holds
    expect(await names({ projectFilter: 'p1', publicToo: 'p1' })).toEqual(['a', 'b']);
    expect(await names({ project: null, projectFilter: 'p1', publicToo: 'p1' })).toEqual(['a', 'b', 'c']);
    expect(await names({ project: null, projectFilter: 'p2', publicToo: 'p1' })).toEqual(['c', 'd']);
  });

  it('applies filters and nulls', async () => {
    expect(await names({ project: null, nulls: ['description'] })).toEqual(['b', 'd']);
    expect(
      await names({ project: null, filters: [{ field: 'description', op: 'neq', value: 'one' }] }),
    ).toEqual(['b', 'c', 'd']);
    expect(
      await names({ project: null, filters: [{ field: 'name', op: 'nin', value: ['a', 'd'] }] }),
    ).toEqual(['b', 'c']);
    expect(
      await names({ project: null, filters: [{ field: 'variables', op: 'eq', value: '{"n": "c"}' }] }),
    ).toEqual(['c']);
    expect(
      await names({
        project: null,
        filters: [{ field: 'created_at', op: 'gt', value: '2024-05-01T10:00:02.000Z' }],
      }),
    ).toEqual(['c', 'd']);
  });

  it("orders a nullable column's NULLs as PostgreSQL does (last ascending, first descending), and pages through them from every marker", async () => {
    const by = (dir: 'asc' | 'desc') => [
      { key: 'description', dir },
      { key: 'name', dir: 'asc' as const },
    ];
    // descriptions: a 'one', b NULL, c 'three', d NULL (the reference Mistral 15 on PostgreSQL lists
    // executions sorted by state_info the same way)
    expect(await names({ project: null, sort: by('asc') })).toEqual(['a', 'c', 'b', 'd']);
    expect(await names({ project: null, sort: by('desc') })).toEqual(['b', 'd', 'c', 'a']);
    for (const dir of ['asc', 'desc'] as const) {
      const all = await listRuns(t.dataSource, ENVIRONMENTS, page({ project: null, sort: by(dir) }), [
        'id',
        'name',
      ]);
      for (const [i, row] of all.entries())
        expect(await names({ project: null, sort: by(dir), marker: String(row['id']) })).toEqual(
          all.slice(i + 1).map((r) => String(r['name'])),
        );
    }
  });

  it('continues after a marker the caller may see, and 404s another project’s', async () => {
    const all = await listRuns(t.dataSource, ENVIRONMENTS, page({ project: null }), ['id', 'name']);
    const [a, , c] = all.map((r) => String(r['id']));
    const desc = [
      { key: 'description', dir: 'desc' as const },
      { key: 'id', dir: 'asc' as const },
    ];
    const byDescription = await names({ project: null, sort: desc });
    const after = await names({ project: null, sort: desc, marker: String(all[0]!['id']), limit: 2 });
    expect(after).toEqual(byDescription.slice(byDescription.indexOf('a') + 1).slice(0, 2));
    expect(await names({ marker: a, markerProject: 'p1' })).toEqual(['b']);
    await expect(names({ marker: c, markerProject: 'p1' })).rejects.toBeInstanceOf(NotFoundError);
    const newestFirst = [
      { key: 'created_at', dir: 'desc' as const },
      { key: 'id', dir: 'asc' as const },
    ];
    expect(
      await names({
        marker: c,
        markerProject: 'p1',
        markerPublicToo: true,
        publicToo: 'p1',
        sort: newestFirst,
      }),
    ).toEqual(['b', 'a']);
  });
});
