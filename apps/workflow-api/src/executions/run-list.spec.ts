import { InvalidInputError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { parseRunList } from './run-list';
import { EXECUTION_LIST } from './run-views';

const user: RequestContext = { requestId: 'r', userId: 'u', projectId: 'p1', roles: [], isAdmin: false };
const policy = new WorkflowPolicy({}, 'headers');

/** sort_keys / sort_dirs of the run-time collections (workflow-api.md §4). */
describe('parseRunList sorting', () => {
  it('gives each key its own direction, a repeated one included, and pads with asc', () => {
    const r = parseRunList(
      EXECUTION_LIST,
      { sort_keys: 'workflow_name,created_at,state', sort_dirs: 'desc,desc' },
      user,
      policy,
    );
    expect(r.sort).toEqual([
      { key: 'workflow_name', dir: 'desc' },
      { key: 'created_at', dir: 'desc' },
      { key: 'state', dir: 'asc' },
      { key: 'id', dir: 'asc' },
    ]);
  });

  it('counts repeated directions against the keys', () => {
    const parse = () =>
      parseRunList(EXECUTION_LIST, { sort_keys: 'created_at', sort_dirs: 'asc,asc' }, user, policy);
    expect(parse).toThrow(InvalidInputError);
    expect(parse).toThrow('Length of sort_keys must be equal or greater than sort_dirs.');
  });
});
