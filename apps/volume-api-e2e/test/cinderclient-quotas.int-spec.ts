import { MODES, newProject, startBlockStorage, type BlockStorage } from './harness';
import { hasCinderClient, runCinderCli } from './python-client';

/**
 * The real `cinder` CLI's quota commands. `cinder quota-update` always sends `tenant_id` in the
 * quota set (python-cinderclient's QuotaSetManager.update); Cinder ignores it, and so must we.
 */
describe.each(MODES.slice(0, 1))('cinder quota-update through the real CLI (%s)', (mode) => {
  let bs: BlockStorage;

  beforeAll(async () => {
    bs = await startBlockStorage(mode, { AUTH_MODE: 'noauth' });
  }, 120000);
  afterAll(async () => {
    await bs?.close();
  });

  const cinder = (project: string, args: string[]) => runCinderCli(bs.base, project, '3.50', args);

  it('updates a project quota and shows it', async () => {
    expect(hasCinderClient).toBe(true);
    const project = newProject();
    const updated = await cinder(project, ['quota-update', '--volumes', '20', '--gigabytes', '300', project]);
    expect(updated.stderr).toBe('');
    expect(updated.code).toBe(0);
    const shown = await cinder(project, ['quota-show', project]);
    expect(shown.code).toBe(0);
    const row = (name: string) =>
      new RegExp(`\\|\\s*${name}\\s*\\|\\s*(-?\\d+)\\s*\\|`).exec(shown.stdout)?.[1];
    expect(row('volumes')).toBe('20');
    expect(row('gigabytes')).toBe('300');
    expect(row('snapshots')).toBe('10');
    // a key that is not a quota is still refused
    const bad = await fetch(`${bs.base}/v3/${project}/os-quota-sets/${project}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-auth-token': `admin:${project}` },
      body: JSON.stringify({ quota_set: { tenant_id: project, bogus: 1 } }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      badRequest: { code: 400, message: 'Bad key(s) in quota set: bogus' },
    });
  }, 60000);
});
