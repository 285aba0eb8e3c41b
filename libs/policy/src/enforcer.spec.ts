import { ForbiddenError } from '@osc/errors';
import { credentialsOf } from './credentials';
import { PolicyEnforcer } from './enforcer';
import { parsePolicyFile } from './policy-file';
import { PolicySyntaxError } from './rule';
import { cinderPolicy, mistralPolicy } from './service-policies';

const creds = (roles: string[], projectId = 'p1', isAdmin = roles.includes('admin')) =>
  credentialsOf({ userId: 'u1', projectId, roles, isAdmin });

describe('PolicyEnforcer', () => {
  const enforcer = (rules: Record<string, string>, defaultRule?: string) =>
    new PolicyEnforcer(rules, {}, { deniedMessage: (a) => `no ${a}`, defaultRule });

  it.each<[string, Record<string, unknown>, boolean]>([
    ['@', {}, true],
    ['!', {}, false],
    ['role:MEMBER', {}, true],
    ['role:admin', {}, false],
    ['role:%(want)s', { want: 'member' }, true],
    ['project_id:%(project_id)s', { project_id: 'p1' }, true],
    ['project_id:%(project_id)s', { project_id: 'p2' }, false],
    ['project_id:%(project_id)s', {}, false],
    ['user_id:%(owner.user)s', { owner: { user: 'u1' } }, true],
    ['is_admin:False', {}, true],
    ['is_admin:True', {}, false],
    ['is_admin_project:True', {}, true],
    ['True:%(enabled)s', { enabled: true }, true],
    ["'p1':%(project_id)s", { project_id: 'p1' }, true],
    ['roles:member', {}, true],
    ['not role:member', {}, false],
    ['role:admin or project_id:%(project_id)s', { project_id: 'p1' }, true],
    ['role:member and not project_id:%(project_id)s', { project_id: 'p1' }, false],
    ['unknown_cred:x', {}, false],
  ])('%s on %j → %s', (rule, target, allowed) => {
    expect(enforcer({ act: rule }).check('act', target, creds(['member']))).toBe(allowed);
  });

  it('follows rule references, denies undefined ones and cycles', () => {
    const e = enforcer({
      base: 'role:member',
      act: 'rule:base',
      dangling: 'rule:nope',
      a: 'rule:b',
      b: 'rule:a',
    });
    expect(e.check('act', {}, creds(['member']))).toBe(true);
    expect(e.check('dangling', {}, creds(['member']))).toBe(false);
    expect(e.check('a', {}, creds(['admin']))).toBe(false);
  });
  it('uses the default rule for unknown actions, else denies', () => {
    expect(enforcer({ default: '@' }, 'default').check('whatever', {}, creds([]))).toBe(true);
    expect(enforcer({}).check('whatever', {}, creds(['admin']))).toBe(false);
  });
  it('throws ForbiddenError with the service message', () => {
    expect(() => enforcer({ act: '!' }).enforce('act', {}, creds(['admin']))).toThrow(
      new ForbiddenError('no act'),
    );
  });
  it('rejects a bad rule at construction, naming it', () => {
    expect(() => enforcer({ 'volume:create': 'role:a or' })).toThrow(/volume:create/);
  });
});

describe('credentialsOf', () => {
  it('adds the roles Keystone implies', () => {
    expect([...creds(['Admin']).roles].sort()).toEqual(['admin', 'member', 'reader']);
    expect([...creds(['member']).roles].sort()).toEqual(['member', 'reader']);
    expect(creds(['reader']).roles).toEqual(['reader']);
  });
});

describe('Cinder defaults (BS-2.4 to BS-2.6)', () => {
  const p = cinderPolicy();
  const own = { project_id: 'p1' };
  const foreign = { project_id: 'p2' };
  it.each<[string, string[], Record<string, unknown>, boolean]>([
    ['volume:get', ['reader'], own, true],
    ['volume:get', ['reader'], foreign, false],
    ['volume:get', ['member'], own, true],
    ['volume:create', ['reader'], own, false],
    ['volume:create', ['member'], own, true],
    ['volume:create', ['member'], foreign, false],
    ['volume:delete', ['member'], own, true],
    ['volume:create', ['admin'], foreign, true],
    ['volume:force_delete', ['member'], own, false],
    ['volume:force_delete', ['admin'], foreign, true],
    ['volume_extension:types_manage', ['member'], own, false],
    ['volume_extension:type_create', ['admin'], own, true],
    ['scheduler_extension:scheduler_stats:get_pools', ['member'], own, false],
    ['volume_extension:hosts', ['admin'], own, true],
    ['backup:backup-import', ['member'], own, false],
    ['volume_extension:default_get_all', ['admin'], own, true],
    ['volume_extension:quotas:show', ['reader'], own, true],
    ['volume_extension:quotas:update', ['member'], own, false],
  ])('%s for %j on %j → %s', (action, roles, target, allowed) => {
    expect(p.check(action, target, creds(roles))).toBe(allowed);
  });
  it('names the denied rule', () => {
    expect(() => p.enforce('volume:force_delete', own, creds(['member']))).toThrow(
      "Policy doesn't allow volume:force_delete to be performed.",
    );
  });
});

describe('Mistral defaults', () => {
  const p = mistralPolicy();
  it.each<[string, string[], boolean]>([
    ['workflows:create', ['member'], true],
    ['workflows:publicize', ['member'], false],
    ['workflows:publicize', ['admin'], true],
    ['executions:list:all_projects', ['member'], false],
    ['executions:list:all_projects', ['admin'], true],
    ['code_sources:create', ['member'], true],
    ['code_sources:publicize', ['member'], false],
    ['dynamic_actions:list:all_projects', ['member'], false],
    ['no:such:rule', ['admin'], false],
  ])('%s for %j → %s', (action, roles, allowed) => {
    expect(p.check(action, { project_id: 'p1' }, creds(roles))).toBe(allowed);
  });
  it('owner rules refuse another project unless admin', () => {
    expect(p.check('workflows:update', { project_id: 'p2' }, creds(['member']))).toBe(false);
    expect(p.check('workflows:update', { project_id: 'p2' }, creds(['admin']))).toBe(true);
  });
  it('denies with the Mistral message', () => {
    expect(() => p.enforce('workflows:publicize', { project_id: 'p1' }, creds(['member']))).toThrow(
      'Operation forbidden (insufficient permissions)',
    );
  });
});

describe('deployment overrides', () => {
  it('a YAML file replaces default rules and adds new ones', () => {
    const overrides = parsePolicyFile(
      [
        '# reference deployment',
        '"workflows:publicize": "@"',
        'volume_ops: "role:ops"',
        '"volume:delete": "rule:volume_ops"',
      ].join('\n'),
      'policy.yaml',
    );
    expect(
      mistralPolicy(overrides).check('workflows:publicize', { project_id: 'p1' }, creds(['member'])),
    ).toBe(true);
    const c = cinderPolicy(overrides);
    expect(c.check('volume:delete', { project_id: 'p1' }, creds(['member']))).toBe(false);
    expect(c.check('volume:delete', { project_id: 'p9' }, creds(['ops']))).toBe(true);
  });
  it('reads JSON and the legacy list form', () => {
    const overrides = parsePolicyFile('{"volume:get": [["role:auditor"], ["role:admin"]]}', 'policy.json');
    expect(cinderPolicy(overrides).check('volume:get', { project_id: 'p1' }, creds(['auditor']))).toBe(true);
  });
  it.each(['- a list', 'rule: {nested: 1}', 'a: "role:x or"', ': : bad: ['])('rejects %j', (text) => {
    expect(() => cinderPolicy(parsePolicyFile(text, 'policy.yaml'))).toThrow(PolicySyntaxError);
  });
  it('an empty file changes nothing', () => {
    expect(parsePolicyFile('', 'policy.yaml')).toEqual({});
  });
});
