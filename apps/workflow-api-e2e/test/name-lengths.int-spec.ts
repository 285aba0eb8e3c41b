import { type ApiServer, Client, e2eModes, startApiServer } from './support/api-server';
import { simpleAction, simpleWorkflow } from './support/fixtures';

const tooLong = (field: string, value: string, max: number) => ({
  faultcode: 'Client',
  faultstring: `Invalid input for field/attribute ${field}. Value: '${value}'. Value should have a maximum character requirement of ${max}`,
  debuginfo: null,
});

/**
 * Names longer than Mistral's columns (definitions 255, cron and event triggers 200) are a 400 that
 * names the field, never a 500 from the database (issue #15 item 5, a fuzz finding on cron triggers).
 */
describe.each(e2eModes())('name lengths (%s)', (mode) => {
  let server: ApiServer;
  let api: Client;
  let wfId: string;
  const json = (method: string, path: string, body: unknown) =>
    api.send(method, path, JSON.stringify(body), 'application/json');

  beforeAll(async () => {
    server = await startApiServer(mode, { authMode: 'headers' });
    api = new Client(server.baseUrl).as({
      'x-project-id': 'proj-len',
      'x-user-id': 'u',
      'x-roles': 'member',
    });
    wfId = (await api.post('/v2/workflows', simpleWorkflow('len_wf'))).body.workflows[0].id;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses cron trigger names over 200 characters and takes 200', async () => {
    for (const n of [201, 5000]) {
      const name = 'c'.repeat(n);
      const res = await json('POST', '/v2/cron_triggers', { name, workflow_id: wfId, pattern: '0 0 1 1 *' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(tooLong('name', name, 200));
    }
    const ok = await json('POST', '/v2/cron_triggers', {
      name: 'c'.repeat(200),
      workflow_id: wfId,
      pattern: '0 0 1 1 *',
    });
    expect(ok.status).toBe(201);
  });

  it('refuses event trigger names over 200 characters on create and update', async () => {
    const base = { workflow_id: wfId, exchange: 'x', topic: 't', event: 'e' };
    const name = 'e'.repeat(201);
    const res = await json('POST', '/v2/event_triggers', { ...base, name });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(tooLong('name', name, 200));
    const created = await json('POST', '/v2/event_triggers', { ...base, name: 'short' });
    expect(created.status).toBe(201);
    const upd = await json('PUT', `/v2/event_triggers/${created.body.id}`, { name });
    expect(upd.status).toBe(400);
    expect(upd.body).toEqual(tooLong('name', name, 200));
  });

  it('refuses workflow, action and workbook names over 255 characters', async () => {
    const name = 'n'.repeat(256);
    const text = { faultstring: tooLong('name', name, 255).faultstring };
    for (const [path, doc] of [
      ['/v2/workflows', simpleWorkflow(name)],
      ['/v2/actions', simpleAction(name)],
      [
        '/v2/workbooks',
        `version: '2.0'\nname: ${name}\nworkflows:\n  x:\n    tasks:\n      t:\n        action: std.noop\n`,
      ],
    ] as const) {
      const res = await api.post(path, doc);
      expect([path, res.status, res.body]).toEqual([path, 400, text]);
    }
    // A workbook whose own name fits but whose `<workbook>.<workflow>` name does not.
    const inner = 'w'.repeat(250);
    const res = await api.post(
      '/v2/workbooks',
      `version: '2.0'\nname: wb_len\nworkflows:\n  ${inner}:\n    tasks:\n      t:\n        action: std.noop\n`,
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ faultstring: tooLong('name', `wb_len.${inner}`, 255).faultstring });
    expect((await api.post('/v2/workflows', simpleWorkflow('n'.repeat(255)))).status).toBe(201);
  });

  it('refuses an execution id that is not a UUID', async () => {
    const res = await json('POST', '/v2/executions', { workflow_id: wfId, id: 'not-a-uuid' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      faultcode: 'Client',
      faultstring: "Invalid input for field/attribute id. Value: 'not-a-uuid'. Invalid UUID",
      debuginfo: null,
    });
  });
});
