import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { MODES, newProject, startBlockStorage, type BlockStorage } from './harness';
import { hasCinderClient, runCinderCli, runPythonScript } from './python-client';

/**
 * The real python-cinderclient: `cinder attachment-create/-complete/-delete` (the CLI, 3.44) and
 * the legacy reserve / initialize_connection / attach / detach calls take a volume in-use and
 * back to available, with the file back end's `local` connection.
 */
describe.each(MODES)('python-cinderclient attachments (%s)', (mode) => {
  let bs: BlockStorage;
  const machine = os.hostname();

  beforeAll(async () => {
    bs = await startBlockStorage(mode, { AUTH_MODE: 'noauth' });
  }, 120000);
  afterAll(async () => {
    await bs?.close();
  });

  const cinder = (project: string, args: string[]) => runCinderCli(bs.base, project, '3.54', args);
  /** `| key | value |` rows of the CLI's tables. */
  const field = (out: string, name: string) =>
    new RegExp(`\\|\\s*${name}\\s*\\|\\s*(\\S*)\\s*\\|`).exec(out)?.[1];

  it('attachment-create --connect, attachment-complete and attachment-delete move the volume in-use and back', async () => {
    expect(hasCinderClient).toBe(true);
    const project = newProject();
    // noauth: the token is `user:project`
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${bs.base}/v3/${project}${path}`, {
        method,
        headers: {
          'x-auth-token': `admin:${project}`,
          'content-type': 'application/json',
          'openstack-api-version': 'volume 3.54',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await r.json()) as any;
    };
    const volume = async (id: string) => (await call('GET', `/volumes/${id}`)).volume;
    const v = (await call('POST', '/volumes', { volume: { size: 1 } })).volume.id;
    for (let s = ''; s !== 'available'; s = (await volume(v)).status)
      await new Promise((r) => setTimeout(r, 20));
    const server = randomUUID();
    const created = await cinder(project, [
      'attachment-create',
      v,
      server,
      '--connect',
      'True',
      '--host',
      machine,
      '--mountpoint',
      '/dev/vdb',
    ]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(field(created.stdout, 'status')).toBe('attaching');
    expect(field(created.stdout, 'driver_volume_type')).toBe('local');
    expect(field(created.stdout, 'device_path')).toBe(`${bs.volumeDir}/volume-${v}`);
    const id = field(created.stdout, 'id') ?? '';
    expect((await volume(v)).status).toBe('attaching');
    const completed = await cinder(project, ['attachment-complete', id]);
    expect([completed.code, completed.stderr]).toEqual([0, '']);
    const inUse = await volume(v);
    expect([
      inUse.status,
      inUse.attachments.map((a: any) => [a.attachment_id, a.server_id, a.device]),
    ]).toEqual(['in-use', [[id, server, '/dev/vdb']]]);
    const listed = await cinder(project, ['attachment-list']);
    expect(listed.stdout).toContain(id);
    const deleted = await cinder(project, ['attachment-delete', id]);
    expect([deleted.code, deleted.stderr]).toEqual([0, '']);
    const after = await volume(v);
    expect([after.status, after.attachments]).toEqual(['available', []]);
    // a connector on another host is refused with Cinder's 400
    const refused = await cinder(project, [
      'attachment-create',
      v,
      server,
      '--connect',
      'True',
      '--host',
      `not-${machine}`,
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `serves 'local' connections on host ${machine} only, not on not-${machine}. (HTTP 400)`,
    );
    expect((await volume(v)).status).toBe('available');
  }, 120000);

  it('reserve, initialize_connection, attach and detach through the python API', async () => {
    const server = randomUUID();
    const res = await runPythonScript('cinderclient_attach.py', [
      `${bs.base}/v3`,
      newProject(),
      machine,
      server,
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout);
    expect(report).toEqual({
      reserved: 'attaching',
      connection: {
        driver_volume_type: 'local',
        device_path: expect.stringMatching(new RegExp(`^${bs.volumeDir}/volume-[0-9a-f-]{36}$`)),
      },
      attached: 'in-use',
      attachments: [[server, '/dev/vdb']],
      detached: 'available',
      after: [],
    });
  }, 120000);
});
