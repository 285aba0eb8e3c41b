import { type ApiServer, Client, e2eModes, startApiServer } from './support/api-server';
import { ACTIONS, TIMESTAMP, UUID, WORKBOOK, simpleAction } from './support/fixtures';

describe.each(e2eModes())('workbooks and actions API (%s)', (mode) => {
  let server: ApiServer;
  let api: Client;

  beforeAll(async () => {
    server = await startApiServer(mode);
    api = new Client(server.baseUrl);
  });
  afterAll(async () => {
    await server?.close();
  });

  describe('workbooks', () => {
    it('creates a workbook (unwrapped) with its workflows and actions as <workbook>.<name>', async () => {
      const res = await api.post('/v2/workbooks', WORKBOOK);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        name: 'my_wb',
        namespace: '',
        definition: WORKBOOK,
        tags: ['wb'],
        scope: 'private',
        project_id: '<default-project>',
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: null,
      });
      const main = await api.get('/v2/workflows/my_wb.main');
      expect(main.status).toBe(200);
      expect(main.body.definition).toMatch(/^main:\n/);
      expect(main.body.input).toBe('who');
      expect((await api.get('/v2/workflows/my_wb.helper')).status).toBe(200);
      const action = await api.get('/v2/actions/my_wb.greet');
      expect(action.status).toBe(200);
      expect(action.body).toMatchObject({
        name: 'my_wb.greet',
        is_system: false,
        input: 'who, punctuation="!"',
        scope: 'private',
      });
    });

    it('gets, lists, selects fields and refuses duplicates', async () => {
      const got = await api.get('/v2/workbooks/my_wb');
      expect(got.status).toBe(200);
      expect(got.body.definition).toBe(WORKBOOK);
      const fields = await api.get('/v2/workbooks/my_wb?fields=name');
      expect(fields.body).toEqual({ id: got.body.id, name: 'my_wb' });
      const list = await api.get('/v2/workbooks?fields=name,tags&tags=wb');
      expect(list.body).toEqual({ workbooks: [{ id: got.body.id, name: 'my_wb', tags: ['wb'] }] });
      const dup = await api.post('/v2/workbooks', WORKBOOK);
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({
        faultstring:
          "Duplicate entry for WorkbookDefinition ['name', 'namespace', 'project_id']: my_wb, , <default-project>",
      });
      const missing = await api.get('/v2/workbooks/nope');
      expect(missing.status).toBe(404);
      expect(missing.body.faultstring).toBe('Workbook not found [name=nope, namespace=]');
      const bogus = await api.get('/v2/workbooks?all_projects=true');
      expect(bogus.status).toBe(400);
    });

    it('updates by the name inside the definition and updates members', async () => {
      const changed = WORKBOOK.replace('tags: [wb]', 'tags: [wb, v2]').replace(
        'action: std.noop',
        'action: std.echo output=2',
      );
      const res = await api.put('/v2/workbooks', changed);
      expect(res.status).toBe(200);
      expect(res.body.tags).toEqual(['wb', 'v2']);
      expect(res.body.updated_at).toMatch(TIMESTAMP);
      const helper = await api.get('/v2/workflows/my_wb.helper');
      expect(helper.body.definition).toContain('std.echo output=2');
      expect(helper.body.updated_at).toMatch(TIMESTAMP);
      const unknown = await api.put('/v2/workbooks', WORKBOOK.replace('name: my_wb', 'name: other_wb'));
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ faultstring: 'Workbook not found [name=other_wb, namespace=]' });
      const invalid = await api.put('/v2/workbooks', 'version: 2.0\nname: my_wb\nworkflows: 7\n');
      expect(invalid.status).toBe(400);
      expect(invalid.body.faultstring).toContain('workflows');
    });

    it('filters, sorts and pages workbooks', async () => {
      const second = WORKBOOK.replace('name: my_wb', 'name: another_wb');
      expect((await api.post('/v2/workbooks?namespace=filters', second)).status).toBe(201);
      const names = async (q: string) =>
        ((await api.get(`/v2/workbooks?${q}`)).body.workbooks as { name: string }[]).map((w) => w.name);
      expect(await names('namespace=filters')).toEqual(['another_wb']);
      expect(await names('name=my_wb&namespace=')).toEqual(['my_wb']);
      expect(await names('sort_keys=name&sort_dirs=desc')).toEqual(['my_wb', 'another_wb']);
      expect(await names('definition=has:another_wb')).toEqual(['another_wb']);
      expect(await names('scope=public')).toEqual([]);
      expect(await names('created_at=gte:2000-01-01&updated_at=lt:2000-01-01')).toEqual([]);
      const page = await api.get('/v2/workbooks?limit=1&sort_keys=name');
      expect(page.body.next).toBe(
        `${server.baseUrl}/v2/workbooks?sort_keys=name,id&sort_dirs=asc,asc&limit=1&marker=${page.body.workbooks[0].id}`,
      );
      const rest = await api.get(page.body.next.slice(server.baseUrl.length));
      expect(rest.body.workbooks.map((w: { name: string }) => w.name)).toEqual(['my_wb']);
      expect((await api.get('/v2/workbooks?marker=00000000-0000-4000-8000-000000000000')).status).toBe(404);
      expect((await api.delete('/v2/workbooks/another_wb?namespace=filters')).status).toBe(204);
    });

    it('validates workbooks', async () => {
      expect((await api.post('/v2/workbooks/validate', WORKBOOK)).body).toEqual({ valid: true });
      const bad = await api.post('/v2/workbooks/validate', 'version: 2.0\n');
      expect(bad.body.valid).toBe(false);
    });

    it('deletes a workbook in its namespace and leaves its members (DSL-7.4)', async () => {
      const ns = await api.post('/v2/workbooks?namespace=team', WORKBOOK);
      expect(ns.status).toBe(201);
      expect((await api.get('/v2/workflows/my_wb.main?namespace=team')).status).toBe(200);
      expect((await api.delete('/v2/workbooks/my_wb?namespace=team')).status).toBe(204);
      expect((await api.get('/v2/workbooks/my_wb?namespace=team')).status).toBe(404);
      expect((await api.get('/v2/workbooks/my_wb')).status).toBe(200);
      expect((await api.get('/v2/workflows/my_wb.main?namespace=team')).status).toBe(200);
      const again = await api.delete('/v2/workbooks/my_wb?namespace=team');
      expect(again.status).toBe(404);
      expect(again.body.faultstring).toBe('Workbook not found [workbook_name=my_wb, namespace=team]');
    });
  });

  describe('actions', () => {
    it('lists the standard actions as system actions with ids, creation time and scope public', async () => {
      const res = await api.get('/v2/actions?is_system=true');
      expect(res.status).toBe(200);
      const echo = res.body.actions.find((a: { name: string }) => a.name === 'std.echo');
      expect(echo).toEqual({
        id: expect.stringMatching(UUID),
        name: 'std.echo',
        is_system: true,
        input: 'output, delay=0',
        description: expect.any(String),
        tags: [],
        definition: '',
        scope: 'public',
        project_id: null,
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: null,
        namespace: '',
      });
      const names = res.body.actions.map((a: { name: string }) => a.name);
      expect(names).toEqual([...names].sort());
      expect((await api.get('/v2/actions/std.echo')).body).toEqual(echo);
      expect((await api.get(`/v2/actions/${echo.id}`)).body).toEqual(echo);
    });

    it('never changes or deletes a system action', async () => {
      const put = await api.put('/v2/actions/std.echo', simpleAction('std.echo'));
      expect(put.status).toBe(400);
      expect(put.body).toEqual({ faultstring: 'Attempt to modify a system action: std.echo' });
      const post = await api.post('/v2/actions', simpleAction('std.noop'));
      expect(post.status).toBe(400);
      const del = await api.delete('/v2/actions/std.echo');
      expect(del.status).toBe(400);
      expect(del.body.faultstring).toBe('Attempt to delete a system action: std.echo');
    });

    it('creates several ad-hoc actions with name, description and input from the definition', async () => {
      const res = await api.post('/v2/actions', ACTIONS);
      expect(res.status).toBe(201);
      expect(res.body.actions).toEqual([
        {
          id: expect.stringMatching(UUID),
          name: 'concat',
          is_system: false,
          input: 'left, right=""',
          description: 'Joins two strings',
          tags: [],
          definition: ACTIONS,
          scope: 'private',
          project_id: '<default-project>',
          created_at: expect.stringMatching(TIMESTAMP),
          updated_at: null,
          namespace: '',
        },
        expect.objectContaining({ name: 'shout', input: null, description: null }),
      ]);
      const dup = await api.post('/v2/actions', simpleAction('concat'));
      expect(dup.status).toBe(409);
      expect(dup.body.faultstring).toBe(
        "Duplicate entry for Action ['name', 'namespace', 'project_id']: concat, , <default-project>",
      );
    });

    it('updates by name or identifier; the name cannot change', async () => {
      const res = await api.put('/v2/actions', simpleAction('concat', 'new text'));
      expect(res.status).toBe(200);
      expect(res.body.actions[0]).toMatchObject({
        name: 'concat',
        description: 'new text',
        input: null,
        updated_at: expect.stringMatching(TIMESTAMP),
      });
      const id = res.body.actions[0].id;
      const byId = await api.put(`/v2/actions/${id}`, simpleAction('concat', 'third'));
      expect(byId.status).toBe(200);
      expect(byId.body.actions[0].description).toBe('third');
      const rename = await api.put(`/v2/actions/${id}`, simpleAction('renamed'));
      expect(rename.status).toBe(400);
      const two = await api.put('/v2/actions/concat', ACTIONS);
      expect(two.status).toBe(400);
      expect(two.body.faultstring).toBe(
        'More than one actions are not supported for update with identifier. [identifier: concat]',
      );
      const missing = await api.put('/v2/actions', simpleAction('ghost'));
      expect(missing.status).toBe(404);
      expect(missing.body.faultstring).toBe('Action definition not found [action_name=ghost, namespace=]');
    });

    it('lists the default namespace unless asked, with filters and a next link carrying namespace', async () => {
      await api.post('/v2/actions?namespace=ns2', simpleAction('in_ns2'));
      const def = await api.get('/v2/actions?is_system=false&sort_keys=name');
      expect(def.body.actions.map((a: { name: string }) => a.name)).toEqual([
        'concat',
        'my_wb.greet',
        'shout',
      ]);
      const ns2 = await api.get('/v2/actions?namespace=ns2');
      expect(ns2.body.actions.map((a: { name: string }) => a.name)).toEqual(['in_ns2']);
      expect((await api.get('/v2/actions/in_ns2?namespace=ns2')).status).toBe(200);
      expect((await api.get('/v2/actions/std.echo?namespace=ns2')).body.name).toBe('std.echo');
      const page = await api.get('/v2/actions?limit=1&is_system=false');
      expect(page.body.next).toBe(
        `${server.baseUrl}/v2/actions?sort_keys=name,id&sort_dirs=asc,asc&is_system=eq:false&namespace=eq:&limit=1&marker=${page.body.actions[0].id}`,
      );
      const desc = await api.get('/v2/actions?description=has:Joins');
      expect(desc.body.actions).toHaveLength(0);
      const notFound = await api.get('/v2/actions/ghost');
      expect(notFound.status).toBe(404);
      expect(notFound.body.faultstring).toBe('Action not found [name=ghost, namespace=]');
    });

    it('validates and deletes actions', async () => {
      expect((await api.post('/v2/actions/validate', ACTIONS)).body).toEqual({ valid: true });
      const bad = await api.post('/v2/actions/validate', "version: '2.0'\nx:\n  input: [a]\n");
      expect(bad.body.valid).toBe(false);
      expect((await api.delete('/v2/actions/shout')).status).toBe(204);
      expect((await api.delete('/v2/actions/in_ns2?namespace=ns2')).status).toBe(204);
      const gone = await api.delete('/v2/actions/shout');
      expect(gone.status).toBe(404);
      expect(gone.body.faultstring).toBe('Action definition not found [action_name=shout, namespace=]');
    });
  });
});
