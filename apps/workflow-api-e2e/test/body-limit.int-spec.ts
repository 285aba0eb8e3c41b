import { rawUpload } from '@osc/testing';
import { type ApiServer, e2eModes, startApiServer } from './support/api-server';

/**
 * A body over WORKFLOW_API_BODY_LIMIT is refused (Mistral: 400) with an answer the client reads in
 * full; the connection is not reset under a client still sending, and serves the next request.
 */
describe.each(e2eModes())('over-large request bodies (%s)', (mode) => {
  let server: ApiServer;

  beforeAll(async () => {
    server = await startApiServer(mode, { bodyLimit: 64 * 1024 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers a 2 MiB upload completely and keeps the connection usable', async () => {
    const res = await rawUpload(`${server.baseUrl}/v2/workflows`, {
      size: 2 * 1024 * 1024,
      headers: { 'content-type': 'text/plain' },
      next: 'GET /v2/workflows HTTP/1.1\r\nhost: x\r\n\r\n',
    });
    expect(res.answer.status).toBe(400);
    expect(res.answer.complete).toBe(true);
    expect(JSON.parse(res.answer.body)).toEqual({ faultstring: 'Request body is too large' });
    expect(res.resetAfterAnswer).toBe(false);
    expect(res.next?.status).toBe(200);
  });
});
