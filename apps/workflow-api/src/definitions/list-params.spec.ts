import { ForbiddenError, InvalidInputError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { WORKFLOW_DEFINITIONS } from '@osc/workflow-persistence';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { type ListSpec, listBody, nextLink, parseListRequest, parseTimestamp } from './list-params';

const SPEC: ListSpec = {
  collection: 'workflows',
  table: WORKFLOW_DEFINITIONS,
  filters: ['created_at', 'name', 'scope', 'tags', 'updated_at', 'input', 'definition', 'namespace'],
  defaultSortKey: 'created_at',
  adminFilters: true,
  policy: 'workflows',
};
const user: RequestContext = { requestId: 'r', userId: 'u', projectId: 'p1', roles: [], isAdmin: false };
const admin: RequestContext = { ...user, roles: ['admin'], isAdmin: true };
const policy = new WorkflowPolicy({}, 'headers');

describe('parseListRequest', () => {
  it('defaults to created_at asc with id appended, limit 1000, own-or-public rows', () => {
    expect(parseListRequest(SPEC, {}, user, policy)).toEqual({
      visibility: { kind: 'project', projectId: 'p1' },
      filters: [],
      sort: [
        { key: 'created_at', dir: 'asc' },
        { key: 'id', dir: 'asc' },
      ],
      limit: 1000,
      fields: [],
      linkFilters: [],
    });
    expect(parseListRequest(SPEC, {}, admin, policy).visibility).toEqual({ kind: 'all' });
  });

  it('reads list-typed values trimmed and lower-cased, pads directions and adds id to fields', () => {
    const r = parseListRequest(
      SPEC,
      { sort_keys: ' Name , created_at', sort_dirs: 'DESC', fields: 'Name', limit: '5000' },
      user,
      policy,
    );
    expect(r.sort).toEqual([
      { key: 'name', dir: 'desc' },
      { key: 'created_at', dir: 'asc' },
      { key: 'id', dir: 'asc' },
    ]);
    expect(r.fields).toEqual(['id', 'name']);
    expect(r.limit).toBe(1000);
  });

  it.each([
    [{ name: 'in:a,b' }, { field: 'name', op: 'in', value: ['a', 'b'] }, 'in:a,b'],
    [{ name: 'a' }, { field: 'name', op: 'eq', value: 'a' }, 'eq:a'],
    [{ name: 'has:x' }, { field: 'name', op: 'has', value: 'x' }, 'has:x'],
    [{ tags: 'a, b' }, { field: 'tags', op: 'eq', value: ['a', 'b'] }, 'eq:a, b'],
    [
      { created_at: 'gte:2016-12-01 15:01:00' },
      { field: 'created_at', op: 'gte', value: '2016-12-01T15:01:00.000Z' },
      'gte:2016-12-01 15:01:00',
    ],
    [{ namespace: '' }, { field: 'namespace', op: 'eq', value: '' }, 'eq:'],
  ])('parses filter %j', (query, filter, link) => {
    const r = parseListRequest(SPEC, query, user, policy);
    expect(r.filters).toEqual([filter]);
    expect(r.linkFilters).toEqual([[filter.field, link]]);
  });

  it.each([
    [{ limit: '0' }, 'Limit must be positive.'],
    [{ limit: '1.5' }, "Invalid input for field/attribute limit. Value: '1.5'. unable to convert to int"],
    [{ sort_dirs: 'asc,asc' }, 'Length of sort_keys must be equal or greater than sort_dirs.'],
    [{ sort_dirs: 'sideways' }, "Unknown sort direction, must be 'desc' or 'asc'."],
    [{ sort_keys: 'spec' }, 'Sort key supplied is invalid: spec'],
    [{ fields: 'spec,x' }, /^Some fields do not exist {2}\[spec, x\], please choose from \[id, name, /],
    [{ unknown: '1' }, 'Unknown argument: "unknown"'],
    [{ tags: 'gt:a' }, /^Filter operator 'gt' is not supported for field tags/],
    [
      { updated_at: 'lt:2021-02-31' },
      "Invalid input for field/attribute updated_at. Value: '2021-02-31'. Invalid date/time format",
    ],
  ])('rejects %j', (query, message) => {
    expect(() => parseListRequest(SPEC, query, user, policy)).toThrow(InvalidInputError);
    expect(() => parseListRequest(SPEC, query, user, policy)).toThrow(message);
  });

  it('keeps all_projects to admins (the policy rule) and makes project_id a filter within what the caller sees', () => {
    expect(() => parseListRequest(SPEC, { all_projects: 'true' }, user, policy)).toThrow(ForbiddenError);
    expect(() => parseListRequest(SPEC, { all_projects: 'true' }, user, policy)).toThrow(
      'Operation forbidden (insufficient permissions)',
    );
    const open = new WorkflowPolicy({ 'workflows:list:all_projects': '@' }, 'headers');
    expect(parseListRequest(SPEC, { all_projects: 'true' }, user, open).visibility).toEqual({ kind: 'all' });
    const own = parseListRequest(SPEC, { project_id: 'p2' }, user, policy);
    expect(own.visibility).toEqual({ kind: 'project', projectId: 'p1' });
    expect(own.filters).toEqual([{ field: 'project_id', op: 'eq', value: 'p2' }]);
    expect(parseListRequest(SPEC, { all_projects: 'false' }, user, policy).filters).toEqual([]);
    expect(parseListRequest(SPEC, { project_id: 'p2', all_projects: '1' }, admin, policy).filters).toEqual([
      { field: 'project_id', op: 'eq', value: 'p2' },
    ]);
  });
});

describe('parseTimestamp', () => {
  it.each([
    ['2016-12-01 15:01:00', '2016-12-01T15:01:00.000Z'],
    ['2016-12-01T15:01:00Z', '2016-12-01T15:01:00.000Z'],
    ['2016-12-01', '2016-12-01T00:00:00.000Z'],
    ['2016-12-01 15:01', '2016-12-01T15:01:00.000Z'],
    ['2016-12-01T15:01:00+02:00', '2016-12-01T13:01:00.000Z'],
    ['2016-12-01 15:01:00.123456', '2016-12-01T15:01:00.123Z'],
  ])('%s', (raw, iso) => expect(parseTimestamp('created_at', raw)).toBe(iso));

  it.each(['yesterday', '2016-13-01', '2016-12-01 25:00:00', '', '2016-12-01 15:01:00 UTC'])(
    'rejects %j',
    (raw) => expect(() => parseTimestamp('created_at', raw)).toThrow(InvalidInputError),
  );
});

describe('next links and bodies', () => {
  const req = parseListRequest(
    SPEC,
    { limit: '2', name: 'in:a,b', created_at: 'gte:2016-12-01 15:01:00', fields: 'name' },
    user,
    policy,
  );

  it('appear only for full pages and repeat sort, filters, limit, marker and fields', () => {
    expect(nextLink('http://h', SPEC, req, { count: 1, lastId: 'x' })).toBeUndefined();
    expect(nextLink('http://h', SPEC, req, { count: 2, lastId: 'id2' })).toBe(
      'http://h/v2/workflows?sort_keys=created_at,id&sort_dirs=asc,asc&created_at=gte:2016-12-01%2015:01:00&name=in:a,b&limit=2&marker=id2&fields=id,name',
    );
  });

  it('wrap the database-rendered page', () => {
    expect(JSON.parse(listBody(SPEC, { json: '[{"id": "a"}]', count: 1, lastId: 'a' }, 'http://n'))).toEqual({
      workflows: [{ id: 'a' }],
      next: 'http://n',
    });
    expect(JSON.parse(listBody(SPEC, { json: '[]', count: 0, lastId: null }, undefined))).toEqual({
      workflows: [],
    });
  });
});
