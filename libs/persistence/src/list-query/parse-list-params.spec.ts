import { InternalError, InvalidInputError } from '@osc/errors';
import { type ListSpec } from './list-query.types';
import { parseDatetime, parseListParams } from './parse-list-params';

const spec: ListSpec = {
  resource: 'Workflow',
  fields: {
    id: { property: 'id', type: 'uuid', sortable: true, filterable: true },
    name: { property: 'name', sortable: true, filterable: true },
    size: { property: 'size', type: 'integer', sortable: true, filterable: true },
    created_at: { property: 'createdAt', type: 'datetime', sortable: true, filterable: true },
    bootable: { property: 'bootable', type: 'boolean', filterable: true },
    input: { property: 'input', type: 'json', filterable: true },
    tags: { property: 'tags', type: 'tags', filterable: true },
    definition: { property: 'definition' },
    interface: {},
  },
  defaultSort: [{ key: 'created_at', dir: 'asc' }],
  maxLimit: 1000,
};
const cinderSpec: ListSpec = {
  ...spec,
  resource: 'Volume',
  defaultSort: [{ key: 'created_at', dir: 'desc' }],
};

const invalid = (fn: () => unknown, message: string): void => {
  expect(fn).toThrow(InvalidInputError);
  expect(fn).toThrow(message);
};

describe('parseListParams (mistral)', () => {
  const parse = (params: Record<string, string>) => parseListParams('mistral', params, spec);

  it('defaults to created_at asc, id as tie-breaker, the maximum page and no filters', () => {
    expect(parse({})).toEqual({
      sort: [
        { key: 'created_at', dir: 'asc' },
        { key: 'id', dir: 'asc' },
      ],
      limit: 1000,
      offset: 0,
      filters: [],
      withCount: false,
    });
  });

  it('pads sort_dirs with asc, lower-cases and trims list values', () => {
    expect(parse({ sort_keys: ' Name , SIZE', sort_dirs: 'DESC' }).sort).toEqual([
      { key: 'name', dir: 'desc' },
      { key: 'size', dir: 'asc' },
      { key: 'id', dir: 'asc' },
    ]);
  });

  it('keeps an explicit id key where the client put it', () => {
    expect(parse({ sort_keys: 'id,name', sort_dirs: 'desc' }).sort).toEqual([
      { key: 'id', dir: 'desc' },
      { key: 'name', dir: 'asc' },
    ]);
  });

  it('clamps the limit and keeps the marker', () => {
    expect(parse({ limit: '5000', marker: 'abc' })).toMatchObject({ limit: 1000, marker: 'abc' });
    expect(parse({ limit: '7' }).limit).toBe(7);
  });

  it.each([
    [{ limit: '0' }, 'Limit must be positive.'],
    [{ limit: '-3' }, 'Limit must be positive.'],
    [{ limit: 'ten' }, "Invalid input for field/attribute limit. Value: 'ten'. unable to convert to int"],
    [
      { sort_keys: 'name', sort_dirs: 'asc,desc' },
      'Length of sort_keys must be equal or greater than sort_dirs.',
    ],
    [{ sort_keys: 'name', sort_dirs: 'up' }, "Unknown sort direction, must be 'desc' or 'asc'."],
    [{ sort_keys: 'bogus' }, 'Sort key supplied is invalid: bogus'],
    [{ sort_keys: 'bootable' }, 'Sort key supplied is invalid: bootable'],
    [
      { fields: 'name,bogus' },
      'Some fields do not exist  [bogus], please choose from [id, name, size, created_at, bootable, input, tags, definition, interface]',
    ],
    [{ bogus: 'x' }, 'Filter field is invalid: bogus'],
    [{ definition: 'x' }, 'Filter field is invalid: definition'],
    [{ size: 'gt:big' }, "Invalid value for filter size: 'gt:big'"],
    [{ bootable: 'maybe' }, "Invalid value for filter bootable: 'maybe'"],
    [{ created_at: 'gte:yesterday' }, "Invalid value for filter created_at: 'gte:yesterday'"],
    [{ input: '{bad json' }, "Invalid value for filter input: '{bad json'"],
    [{ input: 'gt:{}' }, 'Filter input supports only the eq and neq operators'],
  ])('rejects %j', (params, message) => {
    invalid(() => parse(params), message);
  });

  it('puts id first in the requested fields', () => {
    expect(parse({ fields: 'Name,interface,id' }).fields).toEqual(['id', 'name', 'interface']);
  });

  it('parses operator filters into typed values', () => {
    expect(
      parse({
        name: 'has:wf',
        size: 'in:1, 2,3',
        created_at: 'gte:2016-12-01 15:01:00',
        bootable: 'True',
        input: 'eq:{"a": [1]}',
        tags: 'x,y',
        id: 'neq:abc',
      }).filters,
    ).toEqual([
      { field: 'name', op: 'has', value: 'wf', raw: 'wf' },
      { field: 'size', op: 'in', value: [1, 2, 3], raw: '1, 2,3' },
      { field: 'created_at', op: 'gte', value: new Date('2016-12-01T15:01:00Z'), raw: '2016-12-01 15:01:00' },
      { field: 'bootable', op: 'eq', value: true, raw: 'True' },
      { field: 'input', op: 'eq', value: { a: [1] }, raw: '{"a": [1]}' },
      { field: 'tags', op: 'eq', value: ['x', 'y'], raw: 'x,y' },
      { field: 'id', op: 'neq', value: 'abc', raw: 'abc' },
    ]);
  });

  it('treats a value whose prefix is not an operator as an equality', () => {
    expect(parse({ name: 'foo:bar' }).filters).toEqual([
      { field: 'name', op: 'eq', value: 'foo:bar', raw: 'foo:bar' },
    ]);
  });

  it('turns nulls=<fields> into IS NULL filters and leaves passthrough parameters alone', () => {
    expect(
      parseListParams('mistral', { nulls: 'name', all_projects: 'true', include_output: 'true' }, spec, {
        passthrough: ['all_projects', 'include_output'],
      }).filters,
    ).toEqual([{ field: 'name', op: 'eq', value: null, raw: '' }]);
  });

  it('ignores unknown filters when asked to', () => {
    expect(parseListParams('mistral', { bogus: '1' }, spec, { unknownFilters: 'ignore' }).filters).toEqual(
      [],
    );
  });

  it('takes the last of repeated parameters', () => {
    expect(parseListParams('mistral', { limit: ['5', '9'] }, spec).limit).toBe(9);
  });

  it('refuses a spec without a stored id field', () => {
    expect(() => parseListParams('mistral', {}, { ...spec, fields: { name: { property: 'name' } } })).toThrow(
      InternalError,
    );
  });
});

describe('parseListParams (cinder)', () => {
  const parse = (params: Record<string, string>) => parseListParams('cinder', params, cinderSpec);

  it('defaults to created_at desc then id desc', () => {
    expect(parse({})).toMatchObject({
      sort: [
        { key: 'created_at', dir: 'desc' },
        { key: 'id', dir: 'desc' },
      ],
      limit: 1000,
      offset: 0,
      withCount: false,
    });
  });

  it('parses sort=k:dir,k2 with desc as the default direction and the first direction for tie-breakers', () => {
    expect(parse({ sort: 'name:asc,size' }).sort).toEqual([
      { key: 'name', dir: 'asc' },
      { key: 'size', dir: 'desc' },
      { key: 'created_at', dir: 'asc' },
      { key: 'id', dir: 'asc' },
    ]);
  });

  it('parses the deprecated sort_key/sort_dir pair', () => {
    expect(parse({ sort_key: 'size', sort_dir: 'asc' }).sort).toEqual([
      { key: 'size', dir: 'asc' },
      { key: 'created_at', dir: 'asc' },
      { key: 'id', dir: 'asc' },
    ]);
    expect(parse({ sort_dir: 'asc' }).sort[0]).toEqual({ key: 'created_at', dir: 'asc' });
  });

  it('accepts limit 0, an offset and with_count', () => {
    expect(parse({ limit: '0', offset: '20', with_count: 'true' })).toMatchObject({
      limit: 0,
      offset: 20,
      withCount: true,
    });
  });

  it.each([
    [{ limit: 'x' }, 'limit param must be an integer'],
    [{ limit: '-1' }, 'limit param must be positive'],
    [{ offset: '1.5' }, 'offset param must be an integer'],
    [{ offset: '-1' }, 'offset param must be positive'],
    [
      { sort: 'name', sort_key: 'size' },
      "The 'sort_key' and 'sort_dir' parameters are deprecated and cannot be used with the 'sort' parameter.",
    ],
    [{ sort: 'name:sideways' }, "Invalid input received: Unknown sort direction, must be 'desc' or 'asc'"],
    [{ sort_key: 'bogus' }, 'Invalid input received: Invalid sort key bogus'],
    [{ bogus: '1', other: '2' }, 'Invalid filters bogus,other are found in query options.'],
    [{ bootable: 'maybe' }, "Invalid input received: 'bootable = maybe'"],
    [{ created_at: 'after:2024-01-01' }, 'Invalid after operator'],
    [{ created_at: 'gt:soon' }, 'Invalid soon value'],
  ])('rejects %j', (params, message) => {
    invalid(() => parse(params), message);
  });

  it('reads k~ as a LIKE filter and OR-s time conditions', () => {
    expect(parse({ 'name~': 'vol', created_at: 'gt:2024-01-01T00:00:00Z,lte:2024-02-01' }).filters).toEqual([
      { field: 'name', op: 'has', value: 'vol', raw: 'vol' },
      {
        anyOf: [
          {
            field: 'created_at',
            op: 'gt',
            value: new Date('2024-01-01T00:00:00Z'),
            raw: '2024-01-01T00:00:00Z',
          },
          { field: 'created_at', op: 'lte', value: new Date('2024-02-01T00:00:00Z'), raw: '2024-02-01' },
        ],
      },
    ]);
  });

  it('drops unknown filters silently when the caller says so (Cinder before 3.31)', () => {
    expect(
      parseListParams('cinder', { bogus: '1' }, cinderSpec, { unknownFilters: 'ignore' }).filters,
    ).toEqual([]);
  });
});

describe('parseDatetime', () => {
  it.each([
    ['2016-12-01 15:01:00', '2016-12-01T15:01:00.000Z'],
    ['2016-12-01T15:01:00.123456', '2016-12-01T15:01:00.123Z'],
    ['2016-12-01T15:01:00+02:00', '2016-12-01T13:01:00.000Z'],
    ['2016-12-01T15:01+0100', '2016-12-01T14:01:00.000Z'],
    ['2016-12-01', '2016-12-01T00:00:00.000Z'],
  ])('reads %s', (raw, iso) => {
    expect(parseDatetime(raw)?.toISOString()).toBe(iso);
  });

  it.each(['yesterday', '2016-13-01', '2016-02-31', '2016-12-01 25:00:00'])('rejects %s', (raw) => {
    expect(parseDatetime(raw)).toBeUndefined();
  });
});
