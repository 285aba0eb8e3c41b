import { InvalidInputError } from '@osc/errors';
import { parseMicroversion } from '../microversions/microversion';
import {
  admitFilters,
  isTrueish,
  parseBooleanFilter,
  parseDictLiteral,
  parseIsoTime,
  parsePaging,
  parseSort,
  parseTimeFilter,
} from './list-query';
import {
  compileSnapshotFilters,
  compileVolumeFilters,
  SORT_ALIASES,
  VOLUME_SORT_KEYS,
} from './volume-filters';

const mv = parseMicroversion;
const paging = (q: Record<string, string>) =>
  parsePaging(q, { maxLimit: 1000, sortKeys: VOLUME_SORT_KEYS, sortAliases: SORT_ALIASES });

describe('paging', () => {
  it.each([
    [{}, { limit: 1000, limitGiven: false, offset: 0, marker: null }],
    [
      { limit: '5', offset: '2', marker: 'm' },
      { limit: 5, limitGiven: true, offset: 2, marker: 'm' },
    ],
    [{ limit: '5000' }, { limit: 1000, limitGiven: true, offset: 0, marker: null }],
    [{ limit: '0' }, { limit: 0, limitGiven: true, offset: 0, marker: null }],
  ])('parses %p', (q, expected) => {
    expect(paging(q)).toMatchObject(expected);
  });
  it.each([
    [{ limit: 'x' }, 'limit param must be an integer'],
    [{ limit: '1.5' }, 'limit param must be an integer'],
    [{ limit: '-1' }, 'limit param must be positive'],
    [{ offset: 'x' }, 'offset param must be an integer'],
    [{ offset: '-3' }, 'offset param must be positive'],
    [{ offset: '99999999999999999999' }, 'offset param is too large'],
  ])('rejects %p', (q, msg) => {
    expect(() => paging(q)).toThrow(msg);
  });
});

describe('sorting', () => {
  const keys = VOLUME_SORT_KEYS;
  it.each([
    [{}, 'created_at:desc,id:desc'],
    [{ sort: 'name' }, 'name:desc,created_at:desc,id:desc'],
    [{ sort: 'display_name:asc,size' }, 'name:asc,size:desc,created_at:asc,id:asc'],
    [{ sort: 'id:asc' }, 'id:asc,created_at:asc'],
    [{ sort_key: 'size', sort_dir: 'asc' }, 'size:asc,created_at:asc,id:asc'],
    [{ sort_dir: 'asc' }, 'created_at:asc,id:asc'],
    [{ sort: 'created_at:ASC' }, 'created_at:asc,id:asc'],
  ])('%p → %s', (q, expected) => {
    expect(
      parseSort(q, keys, SORT_ALIASES)
        .map((k) => `${k.key}:${k.dir}`)
        .join(','),
    ).toBe(expected);
  });
  it.each([
    [{ sort: 'name', sort_key: 'size' }, /cannot be used with the 'sort' parameter/],
    [{ sort: 'bogus' }, 'Invalid input received: Invalid sort key bogus'],
    [{ sort: 'name:up' }, /Unknown sort direction 'up'/],
    [{ sort: 'name:asc:x' }, /Invalid sort key/],
    [{ sort: ',' }, /empty sort key/],
    [{ sort_key: 'bogus' }, /Invalid sort key/],
  ])('%p → 400', (q, msg) => {
    expect(() => parseSort(q, keys, SORT_ALIASES)).toThrow(msg);
  });
});

describe('filter admission', () => {
  it.each([
    ['admin uses any key', '3.31', true, { foo: '1', limit: '2' }, { foo: '1' }],
    [
      'member allowed key',
      '3.31',
      false,
      { name: 'a', status: 'available' },
      { name: 'a', status: 'available' },
    ],
    ['member unknown key dropped below 3.31', '3.30', false, { foo: '1', name: 'a' }, { name: 'a' }],
    ['all_tenants never a filter', '3.31', false, { all_tenants: '1' }, {}],
    ['with_count never a filter', '3.45', false, { with_count: 'true' }, {}],
  ])('%s', (_n, version, isAdmin, q, expected) => {
    expect(admitFilters('volume', q, { mv: mv(version), isAdmin })).toEqual(expected);
  });
  it('rejects invalid member filters from 3.31', () => {
    expect(() =>
      admitFilters('volume', { foo: '1', bar: '2', name: 'x' }, { mv: mv('3.31'), isAdmin: false }),
    ).toThrow('Invalid input received: Invalid filters foo,bar are found in query options.');
    expect(() => admitFilters('volume', { 'name~': 'x' }, { mv: mv('3.34'), isAdmin: false })).toThrow(
      /Invalid filters name~/,
    );
    expect(
      admitFilters('volume', { 'name~': 'x' }, { mv: mv('3.34'), isAdmin: false, allowList: ['name~'] }),
    ).toEqual({ 'name~': 'x' });
    expect(
      admitFilters('volume', { name: 'x' }, { mv: mv('3.34'), isAdmin: false, allowList: ['name~'] }),
    ).toEqual({ name: 'x' });
  });
  it('requires ASCII keys', () => {
    expect(() => admitFilters('volume', { nämé: 'x' }, { mv: mv('3.0'), isAdmin: true })).toThrow(/ASCII/);
  });
  it.each([
    ['true', '3.2', true],
    ['Yes', '3.2', true],
    ['0', '3.2', false],
    ['OFF', '3.2', false],
    ['maybe', '3.1', true],
    ['false', '3.1', false],
    ['FALSE', '3.0', false],
    ['0', '3.1', true],
  ])('boolean filter %p at %s → %p', (raw, version, expected) => {
    expect(parseBooleanFilter('bootable', raw, mv(version))).toBe(expected);
  });
  it('rejects bad boolean filters from 3.2', () => {
    expect(() => parseBooleanFilter('bootable', 'maybe', mv('3.2'))).toThrow(
      "Invalid input received: 'bootable = maybe'",
    );
  });
  it('reads all_tenants', () => {
    expect([
      isTrueish('1'),
      isTrueish('true'),
      isTrueish('0'),
      isTrueish('false'),
      isTrueish(undefined),
    ]).toEqual([true, true, false, false, false]);
  });
});

describe('time and dict filters', () => {
  it.each([
    ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.000Z'],
    ['2024-01-02T03:04:05', '2024-01-02T03:04:05.000Z'],
    ['2024-01-02', '2024-01-02T00:00:00.000Z'],
    ['2024-01-02T05:04:05+02:00', '2024-01-02T03:04:05.000Z'],
    ['2024-01-02T03:04:05.123456', '2024-01-02T03:04:05.123Z'],
  ])('parseIsoTime(%p)', (raw, iso) => {
    expect(parseIsoTime(raw)?.toISOString()).toBe(iso);
  });
  it.each(['yesterday', '2024-13-45', '2024-01-02T25:00:00', ''])('parseIsoTime(%p) = null', (raw) => {
    expect(parseIsoTime(raw)).toBeNull();
  });
  it('parses operator lists', () => {
    expect(parseTimeFilter('gt:2024-01-01T00:00:00,lte:2024-02-01T00:00:00Z')).toEqual([
      { op: 'gt', at: new Date('2024-01-01T00:00:00Z') },
      { op: 'lte', at: new Date('2024-02-01T00:00:00Z') },
    ]);
    expect(() => parseTimeFilter('after:2024-01-01')).toThrow(
      'Invalid input received: Invalid after operator',
    );
    expect(() => parseTimeFilter('gt:soon')).toThrow('Invalid input received: Invalid soon value');
    expect(() => parseTimeFilter('gt')).toThrow(InvalidInputError);
  });
  it.each([
    ['{"a": "b"}', { a: 'b' }],
    ["{'a': 'b', 'n': 1, 't': True}", { a: 'b', n: '1', t: 'True' }],
    ['[1]', null],
    ['nope', null],
    ['{"a": {"b": 1}}', null],
  ])('parseDictLiteral(%p)', (raw, expected) => {
    expect(parseDictLiteral(raw)).toEqual(expected);
  });
});

describe('compiled volume filters', () => {
  it('compiles each kind', () => {
    expect(
      compileVolumeFilters(
        {
          display_name: 'v',
          size: '2',
          bootable: 'true',
          metadata: '{"k": "v"}',
          'name~': 'x',
          created_at: 'gt:2024-01-01',
          consumes_quota: 'false',
          foo: '1',
        },
        mv('3.65'),
      ),
    ).toEqual([
      { kind: 'eq', field: 'name', value: 'v' },
      { kind: 'eq', field: 'size', value: 2 },
      { kind: 'eq', field: 'bootable', value: true },
      { kind: 'metadata', pairs: { k: 'v' } },
      { kind: 'like', field: 'name', value: 'x' },
      { kind: 'time', field: 'created_at', conditions: [{ op: 'gt', at: new Date('2024-01-01T00:00:00Z') }] },
      { kind: 'eq', field: 'consumes_quota', value: false },
      { kind: 'none', reason: 'foo is not a filterable field' },
    ]);
  });
  it('ignores gated filters below their microversion', () => {
    expect(compileVolumeFilters({ created_at: 'gt:2024-01-01', consumes_quota: 'true' }, mv('3.59'))).toEqual(
      [],
    );
  });
  it('matches nothing for malformed metadata or sizes', () => {
    expect(compileVolumeFilters({ metadata: 'x', size: 'big' }, mv('3.0')).map((f) => f.kind)).toEqual([
      'none',
      'none',
    ]);
  });
  it('gates snapshot metadata filters at 3.22', () => {
    expect(compileSnapshotFilters({ metadata: '{"a":"b"}' }, mv('3.21'))).toEqual([
      { kind: 'none', reason: 'metadata is not a filterable field' },
    ]);
    expect(compileSnapshotFilters({ metadata: '{"a":"b"}' }, mv('3.22'))).toEqual([
      { kind: 'metadata', pairs: { a: 'b' } },
    ]);
  });
});
