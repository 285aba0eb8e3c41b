import { ForbiddenError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { WorkflowPolicy } from './workflow-policy';

const ctx = (projectId: string, roles: string[]): RequestContext => ({
  requestId: 'r',
  userId: 'u',
  projectId,
  roles,
  isAdmin: roles.includes('admin'),
});
const admin = ctx('p-admin', ['admin']);
const member = ctx('p1', ['member']);
const reader = ctx('p1', ['reader']);

describe('WorkflowPolicy', () => {
  const defaults = new WorkflowPolicy({}, 'headers');

  it.each([
    ['workflows:create', true, true, true],
    ['workflows:list', true, true, true],
    ['executions:create', true, true, true],
    ['members:create', true, true, true],
    ['workflows:publicize', true, false, false],
    ['workbooks:publicize', true, false, false],
    ['actions:publicize', true, false, false],
    ['workflows:list:all_projects', true, false, false],
    ['executions:list:all_projects', true, false, false],
    ['cron_triggers:list:all_projects', true, false, false],
    ['environments:create', true, true, true],
    ['environments:get', true, true, true],
    ['environments:list', true, true, true],
    ['environments:update', true, true, true],
    ['environments:delete', true, true, true],
    ['environments:publicize', true, false, false],
    ['no_such:rule', false, false, false],
  ])('Mistral defaults: %s → admin %s, member %s, reader %s', (action, a, m, r) => {
    expect(defaults.allows(action, admin)).toBe(a);
    expect(defaults.allows(action, member)).toBe(m);
    expect(defaults.allows(action, reader)).toBe(r);
  });

  it("denies with Mistral's NotAllowedException message", () => {
    expect(() => defaults.enforce('workflows:publicize', member)).toThrow(ForbiddenError);
    expect(() => defaults.enforce('workflows:publicize', member)).toThrow(
      'Operation forbidden (insufficient permissions)',
    );
  });

  it("judges owner rules against the caller's own project unless the call names the owner", () => {
    expect(defaults.allows('workflows:delete', member)).toBe(true);
    expect(defaults.allows('workflows:delete', member, { project_id: 'p2' })).toBe(false);
    expect(defaults.allows('workflows:delete', admin, { project_id: 'p2' })).toBe(true);
  });

  it("lets a deployment's rules replace the defaults", () => {
    const strict = new WorkflowPolicy(
      {
        'workflows:create': 'role:member',
        'workflows:delete': 'rule:admin_only',
        'workflows:publicize': 'role:member',
      },
      'headers',
    );
    expect(strict.allows('workflows:create', reader)).toBe(false);
    expect(strict.allows('workflows:create', member)).toBe(true);
    expect(strict.allows('workflows:create', admin)).toBe(true);
    expect(strict.allows('workflows:delete', member)).toBe(false);
    expect(strict.allows('workflows:publicize', member)).toBe(true);
    expect(strict.allows('workflows:list', reader)).toBe(true);
  });
});
