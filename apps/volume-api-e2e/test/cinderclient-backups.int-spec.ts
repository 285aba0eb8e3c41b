import { MODES, newProject, startBlockStorage, type BlockStorage } from './harness';
import { scratchDir } from './backup-files';
import { hasCinderClient, runPythonScript } from './python-client';

/** The real python-cinderclient's backups and restores managers in no-auth mode. */
describe.each(MODES.slice(0, 1))('python-cinderclient backups (%s)', (mode) => {
  let bs: BlockStorage;
  let store: ReturnType<typeof scratchDir>;

  beforeAll(async () => {
    store = scratchDir('osc-backups-');
    bs = await startBlockStorage(mode, { AUTH_MODE: 'noauth', BACKUP_STORE_DIR: store.dir });
  }, 120000);
  afterAll(async () => {
    await bs?.close();
    store?.remove();
  });

  it('creates, shows, lists, restores and deletes backups', async () => {
    expect(hasCinderClient).toBe(true);
    const res = await runPythonScript('cinderclient_backups.py', [`${bs.base}/v3`, newProject()]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      created: true,
      became: 'available',
      shown: {
        name: 'pyclient-backup',
        size: 1,
        volume_id_matches: true,
        is_incremental: false,
        metadata: { k: 'v' },
      },
      listed: [['pyclient-backup', 'available']],
      incremental: true,
      restore_name: 'pyclient-restored',
      restored: 'available',
      delete_parent: 400,
      inc_deleted: 'gone',
      deleted: 'gone',
      after_delete: [],
    });
  }, 120000);
});
