import { rawUpload } from '@osc/testing';
import { admin, Client, MODES, startBlockStorage, type BlockStorage } from './harness';

/**
 * A body over VOLUME_API_BODY_LIMIT (112 KiB) is a 413 in Cinder's fault format that the client
 * reads in full; the connection is not reset under a client still sending its body (issue #15
 * item 5), and stays usable once the body is drained.
 */
describe.each(MODES)('over-large request bodies (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    api = new Client(bs.base, admin);
  });
  afterAll(async () => {
    await bs?.close();
  });

  const identity = {
    'x-project-id': admin.project,
    'x-user-id': admin.user,
    'x-roles': admin.roles,
    'openstack-api-version': 'volume 3.71',
  };
  const nextRequest = () =>
    `GET /v3/${admin.project}/types HTTP/1.1\r\nhost: x\r\n${Object.entries(identity)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n`;

  it.each([2 * 1024 * 1024, 200 * 1024])(
    'answers a %d-byte type create with a complete 413 and drains the body',
    async (size) => {
      const res = await rawUpload(api.url('/types'), { size, headers: identity, next: nextRequest() });
      expect(res.answer.status).toBe(413);
      expect(res.answer.complete).toBe(true);
      expect(JSON.parse(res.answer.body)).toEqual({
        overLimit: { code: 413, message: 'Request body is too large' },
      });
      expect(res.resetAfterAnswer).toBe(false);
      expect(res.next?.status).toBe(200);
      expect(JSON.parse(res.next?.body ?? 'null')).toHaveProperty('volume_types');
    },
  );

  it('answers an unauthenticated 2 MiB upload with a complete 401 without resetting', async () => {
    const res = await rawUpload(api.url('/types'), {
      size: 2 * 1024 * 1024,
      headers: { 'x-roles': 'admin' },
      next: nextRequest(),
    });
    expect(res.answer.status).toBe(401);
    expect(res.answer.complete).toBe(true);
    expect(res.resetAfterAnswer).toBe(false);
    expect(res.next?.status).toBe(200);
  });
});
