import { NotFoundError } from '@osc/errors';
import { Column, Entity, type MigrationInterface, PrimaryColumn, type QueryRunner } from 'typeorm';
import { createTestDataSource, ENGINE_KINDS, type TestDataSource } from '../testing/test-data-source';
import { applyListQuery } from './apply-list-query';
import { type ListDialect, type ListParams, parseListParams } from './parse-list-params';
import { type ListQuery, type ListSpec, type SortKey } from './list-query.types';

@Entity({ name: 'lq_thing' })
class LqThing {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;
  @Column({ type: 'text' })
  name!: string;
  @Column({ type: 'int' })
  rank!: number;
  @Column({ type: 'int', nullable: true })
  priority!: number | null;
  @Column({ type: 'text', name: 'status' })
  status!: string;
  @Column({ type: 'timestamptz', name: 'created_at' })
  createdAt!: Date;
  @Column({ type: 'jsonb', default: () => "'[]'" })
  tags!: string[];
  @Column({ type: 'jsonb', nullable: true })
  params!: unknown;
  @Column({ type: 'boolean' })
  bootable!: boolean;
}

class CreateLqThing1700000000100 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE lq_thing (
      id uuid PRIMARY KEY, name text NOT NULL, rank int NOT NULL, priority int, status text NOT NULL,
      created_at timestamptz NOT NULL, tags jsonb NOT NULL DEFAULT '[]', params jsonb, bootable boolean NOT NULL)`);
    await q.query('CREATE INDEX lq_thing_created_at_id ON lq_thing (created_at, id)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE lq_thing');
  }
}

const spec: ListSpec = {
  resource: 'Thing',
  fields: {
    id: { property: 'id', type: 'uuid', sortable: true, filterable: true },
    name: { property: 'name', sortable: true, filterable: true },
    rank: { property: 'rank', type: 'integer', sortable: true, filterable: true },
    priority: { property: 'priority', type: 'integer', nullable: true, sortable: true, filterable: true },
    status: { property: 'status', sortable: true, filterable: true },
    created_at: { property: 'createdAt', type: 'datetime', sortable: true, filterable: true },
    tags: { property: 'tags', type: 'tags', filterable: true },
    params: { property: 'params', type: 'json', nullable: true, filterable: true },
    bootable: { property: 'bootable', type: 'boolean', filterable: true },
    summary: {},
  },
  defaultSort: [{ key: 'created_at', dir: 'asc' }],
  maxLimit: 1000,
};

const ROWS = 1000;

/** Deterministic rows with many duplicates, NULLs and microsecond timestamps. */
const SEED = `INSERT INTO lq_thing (id, name, rank, priority, status, created_at, tags, params, bootable)
  SELECT
    ('00000000-0000-4000-8000-' || lpad(to_hex(g * 7919 % 1000003), 12, '0'))::uuid,
    'n' || (g % 37),
    g % 10,
    CASE WHEN g % 7 = 0 THEN NULL ELSE g % 13 END,
    (ARRAY['ACTIVE', 'ERROR', 'PAUSED'])[g % 3 + 1],
    timestamptz '2024-01-01 00:00:00+00' + (g % 50) * interval '1 second' + (g % 3) * interval '1 microsecond',
    CASE WHEN g % 4 = 0 THEN '["a","b"]'::jsonb WHEN g % 4 = 1 THEN '["a"]'::jsonb ELSE '[]'::jsonb END,
    CASE WHEN g % 5 = 0 THEN NULL ELSE jsonb_build_object('k', g % 5) END,
    g % 2 = 0
  FROM generate_series(1, ${ROWS}) AS g`;

const ORDERS: SortKey[][] = [
  [{ key: 'created_at', dir: 'asc' }],
  [{ key: 'created_at', dir: 'desc' }],
  [{ key: 'name', dir: 'asc' }],
  [{ key: 'name', dir: 'desc' }],
  [{ key: 'priority', dir: 'asc' }],
  [{ key: 'priority', dir: 'desc' }],
  [
    { key: 'rank', dir: 'asc' },
    { key: 'name', dir: 'desc' },
  ],
  [
    { key: 'priority', dir: 'desc' },
    { key: 'created_at', dir: 'asc' },
  ],
  [
    { key: 'status', dir: 'asc' },
    { key: 'priority', dir: 'asc' },
    { key: 'rank', dir: 'desc' },
  ],
  [{ key: 'id', dir: 'desc' }],
];

describe.each(ENGINE_KINDS)('list query on %s', (kind) => {
  let t: TestDataSource;
  const list = (query: ListQuery) =>
    applyListQuery(t.dataSource.getRepository(LqThing).createQueryBuilder('thing'), spec, query);
  const parse = (dialect: ListDialect, params: ListParams) => parseListParams(dialect, params, spec);

  beforeAll(async () => {
    t = await createTestDataSource(kind, { entities: [LqThing], migrations: [CreateLqThing1700000000100] });
    await t.dataSource.query(SEED);
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it.each(ORDERS.map((o) => [o.map((k) => `${k.key} ${k.dir}`).join(', '), o] as const))(
    'pages through every row exactly once ordered by %s',
    async (_label, order) => {
      const sort = [
        ...order,
        ...(order.some((k) => k.key === 'id') ? [] : [{ key: 'id', dir: 'asc' as const }]),
      ];
      const whole = await list({ sort, limit: ROWS, offset: 0, filters: [], withCount: false });
      expect(whole.items).toHaveLength(ROWS);
      expect(whole.hasMore).toBe(false);
      const paged: string[] = [];
      let marker: string | undefined;
      for (let pages = 0; pages < 100; pages += 1) {
        const page = await list({
          sort,
          limit: 37,
          offset: 0,
          filters: [],
          withCount: false,
          ...(marker ? { marker } : {}),
        });
        paged.push(...page.items.map((r) => r.id));
        if (!page.hasMore) break;
        expect(page.items).toHaveLength(37);
        marker = page.items[page.items.length - 1]!.id;
      }
      expect(paged).toEqual(whole.items.map((r) => r.id));
      expect(new Set(paged).size).toBe(ROWS);
      const sample = whole.items;
      for (let i = 1; i < sample.length; i += 1) {
        expect(compareRows(sample[i - 1] as unknown as Row, sample[i] as unknown as Row, sort)).toBeLessThan(
          0,
        );
      }
    },
  );

  it('pages with Mistral parameters and next-link markers', async () => {
    const all: string[] = [];
    let marker: string | undefined;
    for (;;) {
      const q = parse('mistral', {
        sort_keys: 'priority,name',
        sort_dirs: 'desc',
        limit: '150',
        ...(marker ? { marker } : {}),
      });
      expect(q.sort).toEqual([
        { key: 'priority', dir: 'desc' },
        { key: 'name', dir: 'asc' },
        { key: 'id', dir: 'asc' },
      ]);
      const page = await list(q);
      all.push(...page.items.map((r) => r.id));
      if (!page.hasMore) break;
      marker = all[all.length - 1];
    }
    expect(new Set(all).size).toBe(ROWS);
  });

  it('pages with Cinder parameters, offset and count', async () => {
    const first = await list(parse('cinder', { sort: 'rank:asc,name', limit: '10', with_count: 'true' }));
    expect(first.count).toBe(ROWS);
    expect(first.items).toHaveLength(10);
    const skipped = await list(
      parse('cinder', { sort: 'rank:asc,name', limit: '5', offset: '3', marker: first.items[1]!.id }),
    );
    expect(skipped.items.map((r) => r.id)).toEqual(first.items.slice(5, 10).map((r) => r.id));
    const empty = await list(parse('cinder', { limit: '0', with_count: 'true', status: 'ERROR' }));
    expect(empty).toEqual({ items: [], hasMore: false, count: 334 });
  });

  it('rejects an unknown or malformed marker as NotFoundError', async () => {
    await expect(list(parse('mistral', { marker: '00000000-0000-4000-8000-0000000000ff' }))).rejects.toEqual(
      new NotFoundError('Thing', '00000000-0000-4000-8000-0000000000ff'),
    );
    await expect(list(parse('cinder', { marker: 'not-a-uuid' }))).rejects.toBeInstanceOf(NotFoundError);
  });

  it('looks the marker up in the caller scope, not through the list filters', async () => {
    const [row] = (await t.dataSource.query("SELECT id FROM lq_thing WHERE status = 'ERROR' LIMIT 1")) as {
      id: string;
    }[];
    const page = await list(parse('mistral', { status: 'ACTIVE', marker: row!.id, limit: '5' }));
    expect(page.items.every((r) => r.status === 'ACTIVE')).toBe(true);
    const scoped = t.dataSource
      .getRepository(LqThing)
      .createQueryBuilder('thing')
      .where("thing.status = 'ACTIVE'");
    await expect(applyListQuery(scoped, spec, parse('mistral', { marker: row!.id }))).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  const count = async (dialect: ListDialect, params: ListParams): Promise<number> =>
    (await list({ ...parse(dialect, params), withCount: true, limit: 0 })).count!;
  const sqlCount = async (where: string): Promise<number> =>
    (
      (await t.dataSource.query(`SELECT count(*)::int AS n FROM lq_thing WHERE ${where}`)) as { n: number }[]
    )[0]!.n;

  it.each([
    [{ name: 'n5' }, "name = 'n5'"],
    [{ name: 'eq:n5' }, "name = 'n5'"],
    [{ name: 'neq:n5' }, "name <> 'n5'"],
    [{ rank: 'gt:6' }, 'rank > 6'],
    [{ rank: 'gte:6' }, 'rank >= 6'],
    [{ rank: 'lt:2' }, 'rank < 2'],
    [{ rank: 'lte:2' }, 'rank <= 2'],
    [{ rank: 'in:1,3,5' }, 'rank IN (1, 3, 5)'],
    [{ rank: 'nin:1,3,5' }, 'rank NOT IN (1, 3, 5)'],
    [{ name: 'has:1' }, "name LIKE '%1%'"],
    [{ name: 'has:%' }, 'false'],
    [{ priority: 'gte:12', status: 'ERROR' }, "priority >= 12 AND status = 'ERROR'"],
    [{ nulls: 'priority' }, 'priority IS NULL'],
    [{ created_at: 'gte:2024-01-01 00:00:40' }, "created_at >= '2024-01-01 00:00:40+00'"],
    [{ created_at: 'lt:2024-01-01T00:00:10Z' }, "created_at < '2024-01-01 00:00:10+00'"],
    [{ tags: 'a,b' }, 'tags @> \'["a","b"]\''],
    [{ tags: 'a' }, 'tags @> \'["a"]\''],
    [{ params: '{"k": 3}' }, 'params = \'{"k":3}\''],
    [{ id: 'not-a-uuid' }, 'false'],
    [
      { id: 'in:not-a-uuid,00000000-0000-4000-8000-000000001eef' },
      "id = '00000000-0000-4000-8000-000000001eef'",
    ],
  ] as [ListParams, string][])('filters %j like SQL %s (Mistral)', async (params, where) => {
    expect(await count('mistral', params)).toBe(await sqlCount(where));
  });

  it.each([
    [{ status: 'PAUSED' }, "status = 'PAUSED'"],
    [{ 'name~': 'n1' }, "name LIKE '%n1%'"],
    [{ bootable: 'TRUE' }, 'bootable'],
    [{ bootable: 'off' }, 'NOT bootable'],
    [
      { created_at: 'lt:2024-01-01T00:00:05Z,gte:2024-01-01T00:00:45Z' },
      "created_at < '2024-01-01 00:00:05+00' OR created_at >= '2024-01-01 00:00:45+00'",
    ],
  ] as [ListParams, string][])('filters %j like SQL %s (Cinder)', async (params, where) => {
    expect(await count('cinder', params)).toBe(await sqlCount(where));
  });

  it('selects only the requested fields plus id and sort keys when asked', async () => {
    const q = parse('mistral', { fields: 'name', limit: '3' });
    const page = await applyListQuery(
      t.dataSource.getRepository(LqThing).createQueryBuilder('thing'),
      spec,
      q,
      {
        selectFields: true,
      },
    );
    // Entity instances may declare every property (class fields); only the selected ones hold values.
    const loaded = Object.entries(page.items[0]!).filter(([, v]) => v !== undefined);
    expect(loaded.map(([k]) => k).sort()).toEqual(['createdAt', 'id', 'name']);
  });
});

type Row = Record<string, unknown>;
const PROPS: Record<string, string> = { created_at: 'createdAt' };

/** The reference order: NULL above every value; Dates by time; strings in C collation are not assumed. */
function compareRows(a: Row, b: Row, sort: readonly SortKey[]): number {
  for (const { key, dir } of sort) {
    const prop = PROPS[key] ?? key;
    const x = a[prop];
    const y = b[prop];
    const sign = dir === 'asc' ? 1 : -1;
    if (x === y) continue;
    if (x === null) return sign;
    if (y === null) return -sign;
    if (x instanceof Date && y instanceof Date) {
      if (x.getTime() !== y.getTime()) return sign * (x.getTime() - y.getTime());
      continue; // microseconds differ below JS precision: trust the database for the tie
    }
    if (typeof x === 'number' && typeof y === 'number') return sign * (x - y);
    return -1; // strings: collation belongs to the database; the paged/whole comparison covers it
  }
  return -1;
}
