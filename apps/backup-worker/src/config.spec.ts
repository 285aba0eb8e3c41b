import path from 'node:path';
import { loadConfig, loadConfigs } from './config';

describe('backup-worker back-end configuration', () => {
  it('serves one back end named by VOLUME_BACKEND_NAME by default', () => {
    const configs = loadConfigs({ DATA_DIR: '/srv/osc', VOLUME_BACKEND_HOST: 'node1' });
    expect(configs.map((c) => [c.volumeBackend.backendName, c.volumeBackend.directory, c.volumeBackend.host])).toEqual([['file', path.resolve('/srv/osc/volumes'), 'node1']]);
    expect(loadConfig({ DATA_DIR: '/srv/osc', VOLUME_BACKEND_NAME: 'lvm' }).volumeBackend.backendName).toBe('lvm');
  });

  it('serves every back end of VOLUME_BACKENDS, the first in VOLUME_BACKEND_DIR and the others beside it', () => {
    const configs = loadConfigs({ VOLUME_BACKEND_DIR: '/vols', VOLUME_BACKENDS: ' fast, slow ', VOLUME_BACKEND_NAME: 'ignored' });
    expect(configs.map((c) => [c.volumeBackend.backendName, c.volumeBackend.directory])).toEqual([
      ['fast', '/vols'],
      ['slow', '/vols-slow'],
    ]);
    expect(configs[1]?.backup).toEqual(configs[0]?.backup);
  });

  it.each(['a,a', 'a,b c', ',', 'a/b'])('refuses VOLUME_BACKENDS=%p', (value) => {
    expect(() => loadConfigs({ VOLUME_BACKENDS: value })).toThrow(/VOLUME_BACKENDS/);
  });
});
