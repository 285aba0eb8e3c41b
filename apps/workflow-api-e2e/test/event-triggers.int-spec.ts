import { randomBytes, randomUUID } from 'node:crypto';
import amqplib from 'amqplib';
import {
  DEFAULT_FIRING,
  EventTriggerFiring,
  NotificationListener,
  startCronScheduler,
} from '@osc/cron-scheduler';
import { type RunningApp, systemClock } from '@osc/platform';
import { testServers } from '@osc/testing';
import { type Client, Client as HttpClient, e2eModes } from './support/api-server';
import {
  type EngineStack,
  postJson,
  putJson,
  startEngineStack,
  waitForExecution,
} from './support/engine-stack';

jest.setTimeout(120_000);

const WF = `
version: '2.0'
on_event:
  input:
    - who
    - greeting: hello
  tasks:
    say:
      action: std.echo output=<% $.greeting %>
`;

/** Polls until `check` returns a value (not undefined) or the deadline passes. */
async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const TS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

describe.each(e2eModes())('event triggers API (%s)', (mode) => {
  let stack: EngineStack;
  let alice: Client;
  let bob: Client;
  let admin: Client;
  let wfId: string;

  beforeAll(async () => {
    stack = await startEngineStack(mode, { authMode: 'headers' });
    const base = new HttpClient(stack.baseUrl);
    alice = base.as({ 'x-project-id': 'proj-a', 'x-user-id': 'alice', 'x-roles': 'member' });
    bob = base.as({ 'x-project-id': 'proj-b', 'x-user-id': 'bob', 'x-roles': 'member' });
    admin = base.as({ 'x-project-id': 'proj-admin', 'x-user-id': 'root', 'x-roles': 'admin' });
    const res = await alice.post('/v2/workflows', WF);
    expect(res.status).toBe(201);
    wfId = res.body.workflows[0].id;
  });

  afterAll(async () => {
    await stack?.close();
  });

  const body = (over: Record<string, unknown> = {}) => ({
    name: 'my_event_trigger',
    workflow_id: wfId,
    exchange: 'openstack',
    topic: 'notification',
    event: 'fake.event',
    workflow_input: '{"who": "w"}',
    ...over,
  });

  it('creates, shows, lists and deletes a trigger with Mistral wire formats', async () => {
    const created = await postJson(alice, '/v2/event_triggers', body({ workflow_params: { env: { k: 1 } } }));
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'my_event_trigger',
      workflow_id: wfId,
      workflow_input: '{"who": "w"}',
      workflow_params: '{"env": {"k": 1}}',
      exchange: 'openstack',
      topic: 'notification',
      event: 'fake.event',
      scope: 'private',
      project_id: 'proj-a',
      created_at: expect.stringMatching(TS),
      updated_at: null,
    });
    const id = created.body.id as string;
    expect((await alice.get(`/v2/event_triggers/${id}`)).body).toEqual(created.body);
    expect((await alice.get(`/v2/event_triggers/${id}?fields=name,event`)).body).toEqual({
      id,
      name: 'my_event_trigger',
      event: 'fake.event',
    });
    const list = await alice.get('/v2/event_triggers');
    expect(list.status).toBe(200);
    expect(list.body.event_triggers.map((t: { id: string }) => t.id)).toEqual([id]);
    // Other projects neither see nor reach it; an admin does.
    expect((await bob.get('/v2/event_triggers')).body.event_triggers).toEqual([]);
    expect((await bob.get(`/v2/event_triggers/${id}`)).status).toBe(404);
    expect((await bob.delete(`/v2/event_triggers/${id}`)).status).toBe(404);
    expect((await admin.get(`/v2/event_triggers/${id}`)).status).toBe(200);

    expect((await alice.delete(`/v2/event_triggers/${id}`)).status).toBe(204);
    const gone = await alice.get(`/v2/event_triggers/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.faultstring).toBe(`Event trigger not found [id=${id}].`);
    expect((await alice.get('/v2/event_triggers')).body.event_triggers).toEqual([]);
  });

  it('refuses what Mistral refuses, with its status codes and messages', async () => {
    const missing = await postJson(alice, '/v2/event_triggers', body({ event: '' }));
    expect(missing.status).toBe(400);
    expect(missing.body.faultstring).toBe(
      "Params {'exchange', 'workflow_id', 'topic', 'event'} must be provided for creating event trigger.",
    );
    const notUuid = await postJson(alice, '/v2/event_triggers', body({ workflow_id: 'nonexist' }));
    expect(notUuid.status).toBe(400);
    expect(notUuid.body.faultstring).toBe('Expected a uuid but received nonexist.');
    const unknownWf = randomUUID();
    const noWf = await postJson(alice, '/v2/event_triggers', body({ workflow_id: unknownWf }));
    expect(noWf.status).toBe(404);
    expect(noWf.body.faultstring).toBe(`Workflow not found [workflow_id=${unknownWf}]`);
    // Another project's private workflow is not found either.
    expect((await postJson(bob, '/v2/event_triggers', body())).status).toBe(404);
    const badInput = await postJson(alice, '/v2/event_triggers', body({ workflow_input: { zz: 1 } }));
    expect(badInput.status).toBe(400);
    expect(badInput.body.faultstring).toBe(
      "Invalid input [name=on_event, class=DirectWorkflowSpec, missing=['who'], unexpected=['zz']]",
    );
    const unknownAttr = await postJson(alice, '/v2/event_triggers', body({ bogus: 1 }));
    expect(unknownAttr.body.faultstring).toBe('Unknown attribute for argument event_trigger: bogus');
    const readOnly = await postJson(alice, '/v2/event_triggers', body({ id: randomUUID() }));
    expect(readOnly.status).toBe(400);
    expect(readOnly.body.faultstring).toMatch(
      /^Invalid input for field\/attribute id\. Value: '.*'\. Cannot set read only field\.$/,
    );
    const badScope = await postJson(alice, '/v2/event_triggers', body({ scope: 'bogus' }));
    expect(badScope.body.faultstring).toBe(
      "Invalid input for field/attribute scope. Value: 'bogus'. Value should be one of: private, public",
    );
    // Publishing a trigger is admin-only in Mistral's default policy.
    const pub = await postJson(alice, '/v2/event_triggers', body({ scope: 'public' }));
    expect(pub.status).toBe(403);
    expect(pub.body.faultstring).toBe('Operation forbidden (insufficient permissions)');
    const badId = await alice.get('/v2/event_triggers/notauuid');
    expect(badId.status).toBe(400);
    expect(badId.body.faultstring).toBe(
      "Invalid input for field/attribute id. Value: 'notauuid'. unable to convert to uuid. Error: Expected a uuid but received notauuid.",
    );
    expect((await alice.get('/v2/event_triggers')).body.event_triggers).toEqual([]);
  });

  it('answers 409 to a second trigger on the same exchange, topic, event and workflow', async () => {
    const first = await postJson(alice, '/v2/event_triggers', body());
    expect(first.status).toBe(201);
    const dup = await postJson(alice, '/v2/event_triggers', body({ name: 'other' }));
    expect(dup.status).toBe(409);
    expect(dup.body.faultstring).toBe(
      `Duplicate entry for EventTrigger ['exchange', 'topic', 'event', 'workflow_id', 'project_id']: openstack, notification, fake.event, ${wfId}, proj-a`,
    );
    // A different event is a different trigger.
    const second = await postJson(alice, '/v2/event_triggers', body({ event: 'other.event' }));
    expect(second.status).toBe(201);
    for (const id of [first.body.id, second.body.id])
      expect((await alice.delete(`/v2/event_triggers/${id}`)).status).toBe(204);
  });

  it('keeps a workflow with event triggers from being deleted', async () => {
    const t = await postJson(alice, '/v2/event_triggers', body());
    expect(t.status).toBe(201);
    const refused = await alice.delete(`/v2/workflows/${wfId}`);
    expect(refused.status).toBe(400);
    expect(refused.body.faultstring).toBe(
      `Can't delete workflow that has event triggers associated. [workflow_identifier=${wfId}], [event_trigger_id(s)=${t.body.id}]`,
    );
    expect((await alice.get(`/v2/workflows/${wfId}`)).status).toBe(200);
    expect((await alice.delete(`/v2/event_triggers/${t.body.id}`)).status).toBe(204);
  });

  it('updates name and workflow input but never exchange, topic or event', async () => {
    const t = await postJson(alice, '/v2/event_triggers', body());
    const id = t.body.id as string;
    const refused = await putJson(alice, `/v2/event_triggers/${id}`, { event: 'other' });
    expect(refused.status).toBe(400);
    expect(refused.body.faultstring).toBe(
      "Can not update fields ['exchange', 'topic', 'event'] of event trigger.",
    );
    const updated = await putJson(alice, `/v2/event_triggers/${id}`, {
      name: 'renamed',
      workflow_input: { who: 'x' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id,
      name: 'renamed',
      workflow_input: '{"who": "x"}',
      event: 'fake.event',
      updated_at: expect.stringMatching(TS),
    });
    expect((await putJson(bob, `/v2/event_triggers/${id}`, { name: 'x' })).status).toBe(404);
    expect((await alice.delete(`/v2/event_triggers/${id}`)).status).toBe(204);
  });

  it("shows another project's public trigger read-only", async () => {
    const wf = await admin.post('/v2/workflows?scope=public', WF.replace('on_event:', 'on_event_pub:'));
    expect(wf.status).toBe(201);
    const pub = await postJson(
      admin,
      '/v2/event_triggers',
      body({ name: 'pub', workflow_id: wf.body.workflows[0].id, scope: 'public' }),
    );
    expect(pub.status).toBe(201);
    expect(pub.body.scope).toBe('public');
    const id = pub.body.id as string;
    expect(
      (await alice.get('/v2/event_triggers')).body.event_triggers.map((t: { id: string }) => t.id),
    ).toEqual([id]);
    expect((await alice.get(`/v2/event_triggers/${id}`)).body.project_id).toBe('proj-admin');
    const del = await alice.delete(`/v2/event_triggers/${id}`);
    expect(del.status).toBe(403);
    expect(del.body.faultstring).toBe(`Can not access EventTrigger resource of other projects, ID: ${id}`);
    expect((await putJson(alice, `/v2/event_triggers/${id}`, { name: 'mine' })).status).toBe(403);
    expect((await admin.delete(`/v2/event_triggers/${id}`)).status).toBe(204);
    expect((await admin.delete(`/v2/workflows/${wf.body.workflows[0].id}`)).status).toBe(204);
  });

  it('pages, sorts and filters like the other lists; all_projects is admin-only', async () => {
    const ids: string[] = [];
    for (const e of ['e.1', 'e.2', 'e.3'])
      ids.push((await postJson(alice, '/v2/event_triggers', body({ name: e, event: e }))).body.id);
    const page = await alice.get('/v2/event_triggers?limit=2&sort_keys=name&sort_dirs=desc');
    expect(page.body.event_triggers.map((t: { name: string }) => t.name)).toEqual(['e.3', 'e.2']);
    expect(page.body.next).toBe(
      `${stack.baseUrl}/v2/event_triggers?sort_keys=name,id&sort_dirs=desc,asc&limit=2&marker=${ids[1]}`,
    );
    const rest = await alice.get(`/v2/event_triggers?limit=2&sort_keys=name&sort_dirs=desc&marker=${ids[1]}`);
    expect(rest.body.event_triggers.map((t: { name: string }) => t.name)).toEqual(['e.1']);
    expect(rest.body.next).toBeUndefined();
    expect(
      (await alice.get('/v2/event_triggers?event=e.2')).body.event_triggers.map((t: { id: string }) => t.id),
    ).toEqual([ids[1]]);
    expect(
      (await alice.get('/v2/event_triggers?event=in:e.1,e.3&sort_keys=event')).body.event_triggers.map(
        (t: { id: string }) => t.id,
      ),
    ).toEqual([ids[0], ids[2]]);
    expect((await alice.get('/v2/event_triggers?bogus=1')).body.faultstring).toBe(
      'Unknown argument: "bogus"',
    );
    expect((await alice.get('/v2/event_triggers?all_projects=true')).status).toBe(403);
    const all = await admin.get('/v2/event_triggers?all_projects=true');
    expect(all.status).toBe(200);
    expect(all.body.event_triggers.map((t: { id: string }) => t.id).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await alice.delete(`/v2/event_triggers/${id}`)).status).toBe(204);
  });
});

/** One oslo.messaging 2.0 notification, as nova's notifier puts it on the wire. */
const oslo = (eventType: string, context: Record<string, unknown>, messageId = randomUUID()) =>
  Buffer.from(
    JSON.stringify({
      'oslo.version': '2.0',
      'oslo.message': JSON.stringify({
        message_id: messageId,
        publisher_id: 'compute.host1',
        event_type: eventType,
        priority: 'INFO',
        payload: { instance_id: 'i-1' },
        timestamp: '2026-11-23 10:00:00.000001',
        _unique_id: randomBytes(16).toString('hex'),
        ...Object.fromEntries(Object.entries(context).map(([k, v]) => [`_context_${k}`, v])),
      }),
    }),
  );

describe.each(e2eModes())('event triggers firing on RabbitMQ notifications (%s)', (mode) => {
  const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const exchange = `osc-test-notify-${tag}`;
  const queuePrefix = `osc-test-et-${tag}.`;
  let stack: EngineStack;
  let scheduler: RunningApp;
  let direct: NotificationListener;
  let alice: Client;
  let conn: amqplib.ChannelModel;
  let ch: amqplib.Channel;
  let wfId: string;

  const startListener = () =>
    startCronScheduler(
      {
        health: { port: 0, host: '127.0.0.1' },
        logLevel: 'silent',
        firing: DEFAULT_FIRING,
        eventTriggers: {
          amqpUrl: testServers().amqpUrl,
          queuePrefix,
          syncIntervalMs: 200,
          exchangeDurable: false,
        },
      },
      stack.testRuntime.runtime,
      { http: false },
    );

  beforeAll(async () => {
    stack = await startEngineStack(mode, { authMode: 'headers' });
    alice = new HttpClient(stack.baseUrl).as({
      'x-project-id': 'proj-a',
      'x-user-id': 'alice',
      'x-roles': 'member',
    });
    const res = await alice.post('/v2/workflows', WF);
    wfId = res.body.workflows[0].id;
    conn = await amqplib.connect(testServers().amqpUrl);
    ch = await conn.createChannel();
    await ch.assertExchange(exchange, 'topic', { durable: false });
    // Two replicas on one queue: the app as deployed, and a bare listener the test can make sync now.
    scheduler = await startListener();
    const rt = stack.testRuntime.runtime;
    direct = new NotificationListener(
      rt.dataSource,
      new EventTriggerFiring(rt.dataSource, rt.outbox, systemClock),
      {
        amqpUrl: testServers().amqpUrl,
        queuePrefix,
        syncIntervalMs: 200,
        exchangeDurable: false,
        prefetch: 5,
        retryDelayMs: 200,
      },
    );
    await direct.start();
  });

  afterAll(async () => {
    await direct?.stop().catch(() => undefined);
    await scheduler?.close().catch(() => undefined);
    await ch?.deleteQueue(`${queuePrefix}event-triggers.${exchange}`).catch(() => undefined);
    await ch?.deleteExchange(exchange).catch(() => undefined);
    await conn?.close().catch(() => undefined);
    await stack?.close();
  });

  const triggered = async (triggerId: string) => {
    const res = await alice.get('/v2/executions?limit=1000');
    return (res.body.executions as Record<string, any>[]).filter((e) => {
      try {
        return JSON.parse(e['description']).triggered_by.id === triggerId;
      } catch {
        return false;
      }
    });
  };

  /** The shared queue is bound to the trigger's topic and both replicas consume from it. */
  const listening = async () => {
    await direct.sync();
    await eventually(async () =>
      (await ch.checkQueue(direct.queueOf(exchange))).consumerCount === 2 ? true : undefined,
    );
  };

  it('starts the workflow once per notification, with its input, params and the event', async () => {
    const t = await postJson(alice, '/v2/event_triggers', {
      name: 'on_create',
      workflow_id: wfId,
      exchange,
      topic: 'notifications',
      event: 'compute.instance.create.end',
      workflow_input: { who: 'vm' },
      workflow_params: { env: { region: 'r1' } },
    });
    expect(t.status).toBe(201);
    await listening();
    const messageId = randomUUID();
    const message = oslo('compute.instance.create.end', { project_id: 'proj-a', user_id: 'u-1' }, messageId);
    // The same notification twice (a redelivery, or two publishes) and one of an event nobody wants.
    ch.publish(exchange, 'notifications.info', message);
    ch.publish(exchange, 'notifications.info', message);
    ch.publish(exchange, 'notifications.info', oslo('compute.instance.delete.end', { project_id: 'proj-a' }));
    const [ex] = await eventually(async () => {
      const found = await triggered(t.body.id);
      return found.length ? found : undefined;
    });
    const done = await waitForExecution(alice, ex!['id']);
    expect(done['state']).toBe('SUCCESS');
    expect(JSON.parse(done['input'])).toEqual({ who: 'vm', greeting: 'hello' });
    expect(JSON.parse(done['description'])).toEqual({
      description: `Workflow execution created by event trigger '(${t.body.id})'.`,
      triggered_by: { type: 'event_trigger', id: t.body.id, name: 'on_create' },
    });
    expect(JSON.parse(done['params'])).toMatchObject({
      env: { region: 'r1' },
      event_params: {
        service: 'compute.host1',
        project_id: 'proj-a',
        user_id: 'u-1',
        timestamp: '2026-11-23 10:00:00.000001',
      },
    });
    // Give a duplicate time to show up: there must be exactly one execution.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await triggered(t.body.id)).toHaveLength(1);

    // A notification from another project does not fire a private trigger.
    ch.publish(exchange, 'notifications.info', oslo('compute.instance.create.end', { project_id: 'proj-b' }));
    // Another priority of the same topic does.
    ch.publish(
      exchange,
      'notifications.error',
      oslo('compute.instance.create.end', { project_id: 'proj-a' }),
    );
    await eventually(async () => ((await triggered(t.body.id)).length === 2 ? true : undefined));
    await new Promise((r) => setTimeout(r, 1000));
    expect(await triggered(t.body.id)).toHaveLength(2);

    // Deleted triggers fire no more.
    expect((await alice.delete(`/v2/event_triggers/${t.body.id}`)).status).toBe(204);
    ch.publish(exchange, 'notifications.info', oslo('compute.instance.create.end', { project_id: 'proj-a' }));
    await new Promise((r) => setTimeout(r, 1500));
    expect(await triggered(t.body.id)).toHaveLength(2);
  });

  it('fires exactly once per notification across two listener replicas under load', async () => {
    const t = await postJson(alice, '/v2/event_triggers', {
      name: 'bulk',
      workflow_id: wfId,
      exchange,
      topic: 'bulk',
      event: 'bulk.event',
      workflow_input: { who: 'x' },
    });
    await listening();
    const ids = Array.from({ length: 20 }, () => randomUUID());
    // Every notification is published twice: 40 messages, 20 distinct notifications.
    for (const id of [...ids, ...ids])
      ch.publish(exchange, 'bulk.info', oslo('bulk.event', { project_id: 'proj-a' }, id));
    await eventually(async () => ((await triggered(t.body.id)).length >= 20 ? true : undefined), 60_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await triggered(t.body.id)).toHaveLength(20);
    const rows: { n: string }[] = await stack.testRuntime.runtime.dataSource.query(
      `SELECT count(*)::text AS n FROM "event_trigger_notifications" WHERE "message_id" = ANY($1)`,
      [ids],
    );
    expect(rows[0]!.n).toBe('20');
  });
  it('acks only after the executions are committed: a failed attempt is delivered again', async () => {
    // Only this listener consumes now, and its first transaction dies just before committing.
    await scheduler.close();
    await direct.stop();
    let attempts = 0;
    const rt = stack.testRuntime.runtime;
    const failing = new EventTriggerFiring(rt.dataSource, rt.outbox, systemClock, {
      beforeCommit: async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('crash before commit');
      },
    });
    direct = new NotificationListener(rt.dataSource, failing, {
      amqpUrl: testServers().amqpUrl,
      queuePrefix,
      syncIntervalMs: 200,
      exchangeDurable: false,
      prefetch: 5,
      retryDelayMs: 200,
    });
    await direct.start();
    const t = await postJson(alice, '/v2/event_triggers', {
      name: 'retry',
      workflow_id: wfId,
      exchange,
      topic: 'retry',
      event: 'retry.event',
      workflow_input: { who: 'r' },
    });
    expect(t.status).toBe(201);
    await direct.sync();
    ch.publish(exchange, 'retry.info', oslo('retry.event', { project_id: 'proj-a' }));
    await eventually(async () => ((await triggered(t.body.id)).length === 1 ? true : undefined));
    expect(attempts).toBe(2);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await triggered(t.body.id)).toHaveLength(1);
  });
});
