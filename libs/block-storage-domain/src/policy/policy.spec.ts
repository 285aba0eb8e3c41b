import { ForbiddenError } from '@osc/errors';
import { authorize, isAllowed } from './policy';

const admin = { projectId: 'p', roles: ['admin'], isAdmin: true };
const member = { projectId: 'p', roles: ['member', 'reader'], isAdmin: false };
const reader = { projectId: 'p', roles: ['reader'], isAdmin: false };
const nobody = { projectId: 'p', roles: [], isAdmin: false };

describe('policy', () => {
  it.each([
    ['volume:create', admin, 'p', true],
    ['volume:create', member, 'p', true],
    ['volume:create', reader, 'p', false],
    ['volume:get', reader, 'p', true],
    ['volume:get', nobody, 'p', false],
    ['volume:get', member, 'other', false],
    ['volume:get', admin, 'other', true],
    ['volume_extension:types_manage', member, 'p', false],
    ['volume_extension:types_manage', admin, 'p', true],
    ['unknown:rule', member, 'p', false],
  ] as const)('%s for %p on %s → %p', (rule, subject, target, expected) => {
    expect(isAllowed(rule, subject, target)).toBe(expected);
  });
  it('names the rule in 403s and honours overrides', () => {
    expect(() => authorize('volume_extension:types_manage', member)).toThrow(ForbiddenError);
    expect(() => authorize('volume_extension:types_manage', member)).toThrow("Policy doesn't allow volume_extension:types_manage to be performed.");
    expect(() => authorize('volume_extension:types_manage', member, 'p', { 'volume_extension:types_manage': 'member' })).not.toThrow();
  });
});
