import { MODES, newProject, startBlockStorage, type BlockStorage } from './harness';
import { hasCinderClient, runPythonScript } from './python-client';

/** The real python-cinderclient in no-auth mode against the running service. */
describe.each(MODES.slice(0, 1))('python-cinderclient compatibility (%s)', (mode) => {
  let bs: BlockStorage;

  beforeAll(async () => {
    bs = await startBlockStorage(mode, { AUTH_MODE: 'noauth' });
  }, 120000);
  afterAll(async () => {
    await bs?.close();
  });

  it('lists and creates types with extra specs, creates, lists, extends and deletes volumes', async () => {
    expect(hasCinderClient).toBe(true);
    const project = newProject();
    const res = await runPythonScript('cinderclient_check.py', [`${bs.base}/v3`, project]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      types_before: ['__DEFAULT__'],
      type_keys: { volume_backend_name: 'file', 'capabilities:thin_provisioning_support': '<is> True' },
      types_after: ['__DEFAULT__', 'pyclient-type'],
      default_type: '__DEFAULT__',
      created_status: 'creating',
      became: 'available',
      listed: [['pyclient-vol', 1, 'pyclient-type', 'available']],
      listed_with_count: true,
      shown: { metadata: { k: 'v' }, bootable: 'false', type_id_present: true },
      extended_size: 2,
      unknown_type: 404,
      deleted: 'gone',
      after_delete: [],
      types_final: ['__DEFAULT__'],
    });
  }, 60000);
});
