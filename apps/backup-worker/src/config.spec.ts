import os from 'node:os';
import path from 'node:path';
import { loadConfig, loadConfigs } from './config';

describe('backup-worker back-end configuration', () => {
  it('serves one back end named by VOLUME_BACKEND_NAME by default', () => {
    const configs = loadConfigs({ DATA_DIR: '/srv/osc', VOLUME_BACKEND_HOST: 'node1' });
    expect(
      configs.map((c) => [c.volumeBackend.backendName, c.volumeBackend.directory, c.volumeBackend.host]),
    ).toEqual([['file', path.resolve('/srv/osc/volumes'), 'node1']]);
    expect(loadConfig({ DATA_DIR: '/srv/osc', VOLUME_BACKEND_NAME: 'lvm' }).volumeBackend.backendName).toBe(
      'lvm',
    );
  });

  it('serves every back end of VOLUME_BACKENDS, the first in VOLUME_BACKEND_DIR and the others beside it', () => {
    const configs = loadConfigs({
      VOLUME_BACKEND_DIR: '/vols',
      VOLUME_BACKENDS: ' fast, slow ',
      VOLUME_BACKEND_NAME: 'ignored',
    });
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

describe('backup-worker backup driver configuration (BACKUP_DRIVER)', () => {
  it('keeps the posix store under DATA_DIR by default and takes Cinder driver paths as names', () => {
    expect(loadConfig({ DATA_DIR: '/srv/osc' }).backup.store).toEqual({
      driver: 'posix',
      directory: path.resolve('/srv/osc/backups'),
    });
    expect(
      loadConfig({
        BACKUP_DRIVER: 'cinder.backup.drivers.s3.S3BackupDriver',
        BACKUP_S3_STORE_ACCESS_KEY: 'a',
        BACKUP_S3_STORE_SECRET_KEY: 'b',
      }).backup.store.driver,
    ).toBe('s3');
  });

  it('reads the Swift settings with Cinder defaults', () => {
    expect(
      loadConfig({
        BACKUP_DRIVER: 'swift',
        BACKUP_SWIFT_AUTH_URL: 'http://keystone:5000/v3',
        BACKUP_SWIFT_AUTH_VERSION: '3',
        BACKUP_SWIFT_USER: 'cinder',
        BACKUP_SWIFT_KEY: 'secret',
        BACKUP_SWIFT_TENANT: 'service',
      }).backup.store,
    ).toMatchObject({
      driver: 'swift',
      url: null,
      authVersion: '3',
      project: 'service',
      userDomain: 'Default',
      container: 'volumebackups',
      segmentSize: 1024 * 1024 * 1024,
      retryAttempts: 3,
      retryBackoffMs: 2000,
    });
  });

  it('reads the S3 settings: the bucket is the default container', () => {
    expect(
      loadConfig({
        BACKUP_DRIVER: 's3',
        BACKUP_S3_ENDPOINT_URL: 'http://minio:9000',
        BACKUP_S3_STORE_ACCESS_KEY: 'a',
        BACKUP_S3_STORE_SECRET_KEY: 'b',
        BACKUP_S3_STORE_BUCKET: 'cinder-backups',
        BACKUP_S3_MD5_VALIDATION: 'False',
      }).backup.store,
    ).toMatchObject({
      driver: 's3',
      endpointUrl: 'http://minio:9000',
      bucket: 'cinder-backups',
      md5Validation: false,
      partSize: 16 * 1024 * 1024,
    });
  });

  it.each<[Record<string, string>, RegExp]>([
    [{ BACKUP_DRIVER: 'ceph' }, /BACKUP_DRIVER: must be posix, swift or s3/],
    [
      { BACKUP_DRIVER: 'swift' },
      /BACKUP_SWIFT_AUTH_URL: is required with BACKUP_DRIVER=swift[\s\S]*BACKUP_SWIFT_USER[\s\S]*BACKUP_SWIFT_KEY/,
    ],
    [
      {
        BACKUP_DRIVER: 'swift',
        BACKUP_SWIFT_AUTH_URL: 'http://k/v3',
        BACKUP_SWIFT_USER: 'u',
        BACKUP_SWIFT_KEY: 'k',
        BACKUP_SWIFT_AUTH_VERSION: '3',
      },
      /BACKUP_SWIFT_PROJECT: is required with BACKUP_SWIFT_AUTH_VERSION=3/,
    ],
    [
      {
        BACKUP_DRIVER: 'swift',
        BACKUP_SWIFT_AUTH_URL: 'http://k/auth',
        BACKUP_SWIFT_USER: 'u',
        BACKUP_SWIFT_KEY: 'k',
        BACKUP_SWIFT_AUTH_VERSION: '2',
      },
      /BACKUP_SWIFT_AUTH_VERSION: must be 1 \(TempAuth\) or 3/,
    ],
    [
      {
        BACKUP_DRIVER: 'swift',
        BACKUP_SWIFT_AUTH_URL: 'keystone:5000',
        BACKUP_SWIFT_USER: 'u',
        BACKUP_SWIFT_KEY: 'k',
      },
      /BACKUP_SWIFT_AUTH_URL: must be an http/,
    ],
    [
      { BACKUP_DRIVER: 's3', BACKUP_S3_STORE_ACCESS_KEY: 'a' },
      /BACKUP_S3_STORE_SECRET_KEY: is required with BACKUP_DRIVER=s3/,
    ],
    [
      {
        BACKUP_DRIVER: 's3',
        BACKUP_S3_STORE_ACCESS_KEY: 'a',
        BACKUP_S3_STORE_SECRET_KEY: 'b',
        BACKUP_S3_STORE_BUCKET: 'Bad_Bucket',
      },
      /BACKUP_S3_STORE_BUCKET: an S3 bucket name/,
    ],
    [
      {
        BACKUP_DRIVER: 's3',
        BACKUP_S3_STORE_ACCESS_KEY: 'a',
        BACKUP_S3_STORE_SECRET_KEY: 'b',
        BACKUP_S3_PART_SIZE: '1024',
      },
      /BACKUP_S3_PART_SIZE/,
    ],
  ])('refuses an invalid driver configuration at start: %p', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('backup-worker data endpoint configuration (VOLUME_DATA_*)', () => {
  const secret = '0123456789abcdef';

  it('has no data endpoint unless VOLUME_DATA_PORT is set, and names the hostname as the machine', () => {
    const c = loadConfig({}).volumeBackend;
    expect(c.data).toBeNull();
    expect(c.machine).toBe(os.hostname());
  });

  it('gives each back end its own port and URL, by default on VOLUME_BACKEND_HOST', () => {
    const configs = loadConfigs({
      VOLUME_BACKENDS: 'a,b',
      VOLUME_BACKEND_HOST: 'node1',
      VOLUME_DATA_PORT: '9200',
      VOLUME_DATA_SECRET: secret,
      VOLUME_BACKEND_MACHINE: 'm1',
    });
    expect(
      configs.map((c) => [c.volumeBackend.data?.port, c.volumeBackend.data?.url, c.volumeBackend.machine]),
    ).toEqual([
      [9200, 'http://node1:9200', 'm1'],
      [9201, 'http://node1:9201', 'm1'],
    ]);
    const urls = loadConfigs({
      VOLUME_BACKENDS: 'a,b',
      VOLUME_DATA_PORT: '9200',
      VOLUME_DATA_SECRET: secret,
      VOLUME_DATA_URL: 'https://data.example:7000/',
    });
    expect(urls.map((c) => c.volumeBackend.data?.url)).toEqual([
      'https://data.example:7000',
      'https://data.example:7001',
    ]);
    expect(urls[0]?.volumeBackend.data).toMatchObject({ host: '0.0.0.0', secret, timeoutMs: 3600_000 });
  });

  it.each([
    [{ VOLUME_DATA_PORT: '9200' }, /VOLUME_DATA_SECRET/],
    [{ VOLUME_DATA_PORT: '9200', VOLUME_DATA_SECRET: 'short' }, /VOLUME_DATA_SECRET/],
    [{ VOLUME_DATA_PORT: '0', VOLUME_DATA_SECRET: secret }, /VOLUME_DATA_PORT/],
    [{ VOLUME_DATA_PORT: '65535', VOLUME_DATA_SECRET: secret, VOLUME_BACKENDS: 'a,b' }, /VOLUME_DATA_PORT/],
    [{ VOLUME_DATA_URL: 'ftp://x' }, /VOLUME_DATA_URL/],
    [{ VOLUME_BACKEND_MACHINE: 'a:b' }, /VOLUME_BACKEND_MACHINE/],
  ])('refuses %p', (env, message) => {
    expect(() => loadConfigs(env)).toThrow(message);
  });
});
