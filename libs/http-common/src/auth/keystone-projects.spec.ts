import { ForbiddenError, TransientError } from '@osc/errors';
import type { RequestContext } from '../context/request-context';
import { FakeKeystone } from './fake-keystone';
import { KeystoneProjects } from './keystone-projects';
import type { KeystoneSettings } from './keystone-settings';

describe('KeystoneProjects', () => {
  const ks = new FakeKeystone();
  const settings = (authUrl: string): KeystoneSettings => ({
    authUrl,
    wwwAuthenticateUri: authUrl,
    username: 'cinder',
    password: 'x',
    projectName: 'service',
    userDomainName: 'Default',
    projectDomainName: 'Default',
    cacheSize: 10,
    cacheTtlSeconds: 10,
    timeoutMs: 1_000,
  });
  const ctx = (authToken?: string): RequestContext => ({
    requestId: 'r',
    userId: 'u',
    projectId: 'p0',
    roles: ['admin'],
    isAdmin: true,
    authToken,
  });

  beforeAll(async () => {
    await ks.start();
    ks.addToken('admin-token', { user: 'admin', project: 'p0', roles: ['admin'] });
    ks.projects.add('p1');
  });
  afterAll(() => ks.stop());

  it('knows existing projects and not others', async () => {
    const projects = new KeystoneProjects(settings(ks.url));
    await expect(projects.exists(ctx('admin-token'), 'p1')).resolves.toBe(true);
    await expect(projects.exists(ctx('admin-token'), 'nope')).resolves.toBe(false);
  });
  it('is forbidden when Keystone refuses the caller or there is no token', async () => {
    const projects = new KeystoneProjects(settings(ks.url));
    await expect(projects.exists(ctx('stranger'), 'p1')).rejects.toThrow(ForbiddenError);
    await expect(projects.exists(ctx(undefined), 'p1')).rejects.toThrow(ForbiddenError);
  });
  it('is unavailable when Keystone cannot be reached', async () => {
    const projects = new KeystoneProjects(settings('http://127.0.0.1:1'));
    await expect(projects.exists(ctx('admin-token'), 'p1')).rejects.toThrow(TransientError);
  });
});
