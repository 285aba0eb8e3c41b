import { MISTRAL_DEFAULT_PROJECT, authenticate } from './request-context';

describe('authenticate', () => {
  const url = 'http://h/v3/volumes';
  it.each([
    ['u1:p1', 'u1', 'p1'],
    ['solo', 'solo', 'solo'],
    ['u:p:x', 'u', 'p:x'],
  ])('noauth splits token %s at the first colon', (token, user, project) => {
    const out = authenticate('noauth', 'block-storage', { 'x-auth-token': token }, 'r', url);
    expect(out).toEqual({
      kind: 'context',
      context: {
        requestId: 'r',
        userId: user,
        projectId: project,
        roles: ['admin'],
        isAdmin: true,
        authToken: token,
      },
    });
  });
  it('noauth block storage without token answers 204 with a token to use', () => {
    const out = authenticate(
      'noauth',
      'block-storage',
      { 'x-auth-user': 'bob', 'x-auth-project-id': 'p9' },
      'r',
      url,
    );
    expect(out).toEqual({
      kind: 'respond',
      status: 204,
      headers: { 'x-auth-token': 'bob:p9', 'x-server-management-url': url },
    });
  });
  it('noauth workflow without token acts for the default project', () => {
    const out = authenticate('noauth', 'workflow', {}, 'r', url);
    expect(out.kind === 'context' && out.context.projectId).toBe(MISTRAL_DEFAULT_PROJECT);
  });
  it('headers mode trusts gateway headers and grants admin only with the admin role', () => {
    const member = authenticate(
      'headers',
      'workflow',
      { 'x-project-id': 'p', 'x-user-id': 'u', 'x-roles': 'member, reader' },
      'r',
      url,
    );
    expect(member).toEqual({
      kind: 'context',
      context: { requestId: 'r', userId: 'u', projectId: 'p', roles: ['member', 'reader'], isAdmin: false },
    });
    const admin = authenticate('headers', 'workflow', { 'x-project-id': 'p', 'x-roles': 'Admin' }, 'r', url);
    expect(admin.kind === 'context' && admin.context.isAdmin).toBe(true);
  });
  it('headers mode without a project is unauthenticated', () => {
    expect(authenticate('headers', 'block-storage', {}, 'r', url).kind).toBe('respond');
  });
});
