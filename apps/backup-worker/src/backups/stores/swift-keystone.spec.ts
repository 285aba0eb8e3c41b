import { startHttpServer, type RecordedRequest } from '@osc/testing';
import { loadConfig } from '../../config';
import { createBackupStore } from './index';

/**
 * Keystone v3 authentication of the Swift driver, on a recording HTTP server that answers as
 * Keystone (`POST /v3/auth/tokens`, token in `X-Subject-Token`, catalog in the body) and as the
 * object-store endpoint of that catalog. No Keystone package is at hand here; the TempAuth path
 * runs against real Swift in stores.int-spec.ts.
 */
describe('Swift driver with Keystone v3', () => {
  it('scopes a password token to the project, takes the endpoint from the catalog and re-authenticates on 401', async () => {
    let issued = 0;
    let rejectNext = false;
    const srv = await startHttpServer((req: RecordedRequest, res) => {
      if (req.method === 'POST' && req.url === '/v3/auth/tokens') {
        issued++;
        res.writeHead(201, { 'content-type': 'application/json', 'x-subject-token': `token-${issued}` });
        res.end(
          JSON.stringify({
            token: {
              catalog: [
                {
                  type: 'identity',
                  endpoints: [{ interface: 'public', region: 'r1', url: `${srv.url}/v3` }],
                },
                {
                  type: 'object-store',
                  endpoints: [
                    { interface: 'public', region: 'r0', url: `${srv.url}/wrong-region` },
                    { interface: 'internal', region: 'r1', url: `${srv.url}/internal` },
                    { interface: 'public', region: 'r1', url: `${srv.url}/v1/AUTH_p1/` },
                  ],
                },
              ],
            },
          }),
        );
        return;
      }
      if (rejectNext) {
        rejectNext = false;
        res.writeHead(401);
        res.end();
        return;
      }
      res.writeHead(
        req.url.startsWith('/v1/AUTH_p1/') && req.headers['x-auth-token'] === `token-${issued}` ? 201 : 403,
      );
      res.end();
    });
    const store = createBackupStore(
      loadConfig({
        BACKUP_DRIVER: 'swift',
        BACKUP_SWIFT_AUTH_URL: `${srv.url}/v3/`,
        BACKUP_SWIFT_AUTH_VERSION: '3',
        BACKUP_SWIFT_USER: 'cinder',
        BACKUP_SWIFT_KEY: 'secret',
        BACKUP_SWIFT_PROJECT: 'service',
        BACKUP_SWIFT_PROJECT_DOMAIN: 'ops',
        BACKUP_SWIFT_REGION: 'r1',
      }).backup.store,
    );
    try {
      await store.ensureContainer('volumebackups');
      await store.write(
        'volumebackups',
        'volume_v/20260101000000/az_nova_backup_b-00001',
        Buffer.from('data'),
      );
      rejectNext = true;
      await store.write(
        'volumebackups',
        'volume_v/20260101000000/az_nova_backup_b_metadata',
        Buffer.from('{}'),
      );
    } finally {
      await srv.close();
      await store.close();
    }
    const auth = srv.requests.filter((r) => r.url === '/v3/auth/tokens');
    expect(auth).toHaveLength(2);
    expect(JSON.parse(auth[0]!.body)).toEqual({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'cinder', password: 'secret', domain: { name: 'Default' } } },
        },
        scope: { project: { name: 'service', domain: { name: 'ops' } } },
      },
    });
    expect(
      srv.requests
        .filter((r) => r.url !== '/v3/auth/tokens')
        .map((r) => [r.method, r.url, r.headers['x-auth-token']]),
    ).toEqual([
      ['PUT', '/v1/AUTH_p1/volumebackups', 'token-1'],
      ['PUT', '/v1/AUTH_p1/volumebackups/volume_v/20260101000000/az_nova_backup_b-00001', 'token-1'],
      ['PUT', '/v1/AUTH_p1/volumebackups/volume_v/20260101000000/az_nova_backup_b_metadata', 'token-1'],
      ['PUT', '/v1/AUTH_p1/volumebackups/volume_v/20260101000000/az_nova_backup_b_metadata', 'token-2'],
    ]);
    // Each object carries its MD5 as ETag.
    expect(srv.requests[2]?.headers['etag']).toBe('8d777f385d3dfec8815d20f7496026dc');
  });
});
