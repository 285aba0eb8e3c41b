import { type ApiServer, Client, e2eModes, startApiServer } from './support/api-server';
import { DIRECT_WF, REVERSE_WF, WORKBOOK } from './support/fixtures';

/** The standard examples of the DSL spec round-trip: create, get, update, delete. */
describe.each(e2eModes())('standard examples round-trip (%s)', (mode) => {
  let server: ApiServer;
  let api: Client;

  beforeAll(async () => {
    server = await startApiServer(mode);
    api = new Client(server.baseUrl);
  });
  afterAll(async () => {
    await server?.close();
  });

  it.each([
    ['direct workflow', 'create_vm', DIRECT_WF],
    ['reverse workflow', 'deploy', REVERSE_WF],
  ])('%s', async (_kind, name, text) => {
    const created = await api.post('/v2/workflows', text);
    expect(created.status).toBe(201);
    const got = await api.get(`/v2/workflows/${name}`);
    expect(got.status).toBe(200);
    expect(got.body.definition).toBe(text);
    expect(JSON.parse(got.body.interface)).toEqual(created.body.workflows[0].interface);
    const changed = text.replace(/^(\s+)action: std\.noop$/m, '$1action: std.echo output=changed');
    expect(changed).not.toBe(text);
    const updated = await api.put('/v2/workflows', changed);
    expect(updated.status).toBe(200);
    expect((await api.get(`/v2/workflows/${name}`)).body.definition).toBe(changed);
    expect((await api.delete(`/v2/workflows/${name}`)).status).toBe(204);
    expect((await api.get(`/v2/workflows/${name}`)).status).toBe(404);
  });

  it('workbook with actions', async () => {
    expect((await api.post('/v2/workbooks', WORKBOOK)).status).toBe(201);
    expect((await api.get('/v2/workbooks/my_wb')).body.definition).toBe(WORKBOOK);
    expect((await api.get('/v2/actions/my_wb.greet')).body.input).toBe('who, punctuation="!"');
    const changed = WORKBOOK.replace('punctuation: "!"', 'punctuation: "?"');
    const updated = await api.put('/v2/workbooks', changed);
    expect(updated.status).toBe(200);
    expect(updated.body.definition).toBe(changed);
    expect((await api.get('/v2/actions/my_wb.greet')).body.input).toBe('who, punctuation="?"');
    expect((await api.delete('/v2/workbooks/my_wb')).status).toBe(204);
    expect((await api.get('/v2/workbooks/my_wb')).status).toBe(404);
    // Members stay (DSL-7.4) and are removed on their own.
    expect((await api.delete('/v2/workflows/my_wb.main')).status).toBe(204);
    expect((await api.delete('/v2/workflows/my_wb.helper')).status).toBe(204);
    expect((await api.delete('/v2/actions/my_wb.greet')).status).toBe(204);
  });
});
