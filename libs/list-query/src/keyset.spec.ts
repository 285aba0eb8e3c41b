import { type SortKey, afterMarker, orderBy, pageTail } from './keyset';

class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const expr = (key: string): string => `t."${key}"`;
const sort: SortKey[] = [
  { key: 'name', dir: 'desc' },
  { key: 'created_at', dir: 'asc' },
  { key: 'id', dir: 'asc' },
];

describe('orderBy / pageTail', () => {
  it('orders by each key’s expression in its direction', () => {
    expect(orderBy(sort, expr)).toBe('t."name" DESC, t."created_at" ASC, t."id" ASC');
  });

  it('adds the limit, then the offset when given', () => {
    const p = new Params();
    expect(pageTail([{ key: 'id', dir: 'asc' }], expr, { limit: 5, offset: 10 }, p)).toBe(
      'ORDER BY t."id" ASC LIMIT $1 OFFSET $2',
    );
    expect(p.values).toEqual([5, 10]);
    const q = new Params();
    expect(pageTail([{ key: 'id', dir: 'desc' }], expr, { limit: 7 }, q)).toBe(
      'ORDER BY t."id" DESC LIMIT $1',
    );
    expect(q.values).toEqual([7]);
  });
});

describe('afterMarker', () => {
  it('bounds the first key, then compares key by key with each direction', () => {
    const m = (key: string, i: number): string => `m${i}.${key}`;
    expect(afterMarker(sort, expr, m)).toBe(
      '(t."name" <= m0.name AND (' +
        '(t."name" < m0.name) OR ' +
        '(t."name" = m0.name AND t."created_at" > m1.created_at) OR ' +
        '(t."name" = m0.name AND t."created_at" = m1.created_at AND t."id" > m2.id)))',
    );
  });

  it('asks for marker values in a fixed order (parameters are numbered by it)', () => {
    const p = new Params();
    const sql = afterMarker(sort.slice(1), expr, (key, i) => p.add(`${key}#${i}`));
    expect(p.values).toEqual(['created_at#0', 'created_at#0', 'id#1', 'created_at#0']);
    expect(sql).toBe(
      '(t."created_at" >= $4 AND ((t."created_at" > $1) OR (t."created_at" = $2 AND t."id" > $3)))',
    );
  });

  it('needs a sort key', () => {
    expect(() => afterMarker([], expr, () => 'x')).toThrow('at least one sort key');
  });
});
