import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type Channel, type ChannelModel, connect } from 'amqplib';
import { notifyQueueOf } from '@osc/notify';
import { type RecordedRequest, startHttpServer, testServers } from '@osc/testing';
import { e2eModes } from './support/api-server';
import {
  type EngineStack,
  postJson,
  putJson,
  startEngineStack,
  waitForExecution,
  waitForTask,
} from './support/engine-stack';

jest.setTimeout(90_000);

/**
 * Notifications (DSL-16.2–16.4) through the HTTP API against real receivers: a local HTTP server for
 * `webhook` publishers and a RabbitMQ queue bound to the notification exchange for `amqp` ones. Each
 * test asserts the events of one execution in delivery order and their payloads.
 */
const DEFINITIONS = `
version: '2.0'
ntf_handled:
  tasks:
    a:
      action: std.echo output=1
      on-success: b
    b:
      action: std.fail
      on-error: c
    c:
      action: std.noop
ntf_async:
  tasks:
    a:
      action: std.async_noop
ntf_fail:
  tasks:
    a:
      action: std.fail
      on-success: b
    b:
      action: std.noop
ntf_parent:
  tasks:
    call:
      workflow: ntf_child
ntf_child:
  tasks:
    leaf:
      action: std.noop
ntf_nested_async:
  tasks:
    call:
      workflow: ntf_async
ntf_three:
  tasks:
    a:
      action: std.noop
      on-success: b
    b:
      action: std.noop
      on-success: c
    c:
      action: std.noop
`;

// The payload keys in the order the reference's engine builds them (the notifier appends `event`); a
// parsed body keeps the order of the serialized one, so the receivers see exactly this order.
const WORKFLOW_KEYS = [
  'id',
  'name',
  'workflow_name',
  'workflow_namespace',
  'workflow_id',
  'state',
  'state_info',
  'project_id',
  'task_execution_id',
  'root_execution_id',
  'created_at',
  'updated_at',
  'event',
];
const TASK_KEYS = [
  'id',
  'name',
  'workflow_execution_id',
  'workflow_name',
  'workflow_namespace',
  'workflow_id',
  'state',
  'state_info',
  'type',
  'project_id',
  'created_at',
  'updated_at',
  'started_at',
  'finished_at',
  'event',
];
const TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

type Event = Record<string, any>;

/** `EVENT` for workflow events, `EVENT:task` for task events: the order the receiver saw. */
const names = (events: Event[]): string[] =>
  events.map((e) => (e['event'].startsWith('TASK_') ? `${e['event']}:${e['name']}` : e['event']));

const checkShape = (e: Event): void => {
  const task = String(e['event']).startsWith('TASK_');
  expect(Object.keys(e)).toEqual(task ? TASK_KEYS : WORKFLOW_KEYS);
  expect(e['created_at']).toMatch(TIMESTAMP);
  if (e['updated_at'] !== null) expect(e['updated_at']).toMatch(TIMESTAMP);
};

describe.each(e2eModes())('notifications over HTTP (%s)', (mode) => {
  let stack: EngineStack;
  let rx: Awaited<ReturnType<typeof startHttpServer>>;
  /** How the receiver answers a request; default 200. */
  let answer: (req: RecordedRequest, res: ServerResponse) => void = (_req, res) => res.writeHead(200).end();
  const exchange = `osc-notify-e2e-${mode}-${randomBytes(4).toString('hex')}`;
  const otherExchange = `${exchange}-other`;
  let amqp: ChannelModel;
  let ch: Channel;

  beforeAll(async () => {
    rx = await startHttpServer((req, res) => answer(req, res));
    amqp = await connect(testServers().amqpUrl);
    ch = await amqp.createChannel();
    await ch.assertExchange(exchange, 'topic', { durable: true });
    await ch.assertExchange(otherExchange, 'direct', { durable: false });
    stack = await startEngineStack(mode, { notifyAmqpUrl: testServers().amqpUrl, notifyExchange: exchange });
    const res = await stack.client.post('/v2/workflows', DEFINITIONS);
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await rx?.close();
    await ch?.deleteExchange(exchange).catch(() => undefined);
    await ch?.deleteExchange(otherExchange).catch(() => undefined);
    await amqp?.close();
  }, 60_000);

  let hookNo = 0;
  /** A webhook publisher with its own path, and the events it received (parsed, in arrival order). */
  const webhook = (extra: Record<string, unknown> = {}) => {
    const path = `/hook/${mode}/${++hookNo}`;
    return {
      publisher: { type: 'webhook', url: `${rx.url}${path}`, ...extra },
      requests: () => rx.requests.filter((r) => r.url === path),
      events: () => rx.requests.filter((r) => r.url === path).map((r) => JSON.parse(r.body) as Event),
    };
  };
  const start = async (workflow: string, notify: unknown[], params: Record<string, unknown> = {}) => {
    const res = await postJson(stack.client, '/v2/executions', {
      workflow_name: workflow,
      params: { notify, ...params },
    });
    if (res.status !== 201) throw new Error(`start ${workflow}: ${res.status} ${res.text}`);
    return res.body as Record<string, any>;
  };
  const put = (path: string, body: unknown) => putJson(stack.client, path, body);
  /** Waits until `read()` has `n` items (then a little longer, to catch extra ones) and returns them. */
  const settle = async <T>(read: () => T[], n: number, timeoutMs = 20_000): Promise<T[]> => {
    const deadline = Date.now() + timeoutMs;
    while (read().length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 300));
    return read();
  };

  describe('webhook', () => {
    it('task and workflow events of a run with a handled error, in order, with the payload fields', async () => {
      const hook = webhook();
      const ex = await start('ntf_handled', [hook.publisher]);
      expect((await waitForExecution(stack.client, ex.id)).state).toBe('SUCCESS');
      const events = await settle(hook.events, 8);
      expect(names(events)).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED:a',
        'TASK_SUCCEEDED:a',
        'TASK_LAUNCHED:b',
        'TASK_FAILED:b',
        'TASK_LAUNCHED:c',
        'TASK_SUCCEEDED:c',
        'WORKFLOW_SUCCEEDED',
      ]);
      events.forEach(checkShape);
      const tasks = (await stack.client.get(`/v2/executions/${ex.id}/tasks`)).body.tasks as any[];
      const b = tasks.find((t) => t.name === 'b');
      expect(events[0]).toMatchObject({
        id: ex.id,
        name: 'ntf_handled',
        workflow_name: 'ntf_handled',
        workflow_namespace: '',
        workflow_id: ex.workflow_id,
        state: 'RUNNING',
        state_info: null,
        project_id: ex.project_id,
        task_execution_id: null,
        root_execution_id: null,
      });
      expect(events[4]).toMatchObject({
        id: b.id,
        name: 'b',
        workflow_execution_id: ex.id,
        workflow_name: 'ntf_handled',
        workflow_id: ex.workflow_id,
        state: 'ERROR',
        type: 'ACTION',
        started_at: expect.stringMatching(TIMESTAMP),
        finished_at: expect.stringMatching(TIMESTAMP),
      });
      expect(events[4]!['state_info']).toContain('Fail action expected exception.');
      expect(events[1]).toMatchObject({
        state: 'RUNNING',
        finished_at: null,
        started_at: expect.stringMatching(TIMESTAMP),
      });
      expect(events[7]).toMatchObject({ id: ex.id, state: 'SUCCESS', state_info: null });
      expect(hook.requests()[0]!.headers['content-type']).toBe('application/json');
    });

    it('pause, resume and cancel of an execution are announced in order with their state_info', async () => {
      const hook = webhook({ headers: { 'X-Token': 'abc' } });
      const ex = await start('ntf_async', [hook.publisher]);
      await waitForTask(stack.client, ex.id, 'a', 'RUNNING');
      expect((await put(`/v2/executions/${ex.id}`, { state: 'PAUSED' })).status).toBe(200);
      expect((await put(`/v2/executions/${ex.id}`, { state: 'PAUSED' })).status).toBe(200);
      expect((await put(`/v2/executions/${ex.id}`, { state: 'RUNNING' })).status).toBe(200);
      expect(
        (await put(`/v2/executions/${ex.id}`, { state: 'CANCELLED', state_info: 'no more' })).status,
      ).toBe(200);
      const events = await settle(hook.events, 5);
      // the second pause was a no-op: no second WORKFLOW_PAUSED
      expect(names(events)).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED:a',
        'WORKFLOW_PAUSED',
        'WORKFLOW_RESUMED',
        'WORKFLOW_CANCELLED',
      ]);
      events.forEach(checkShape);
      expect(events.slice(2).map((e) => [e['state'], e['state_info']])).toEqual([
        ['PAUSED', null],
        ['RUNNING', null],
        ['CANCELLED', 'no more'],
      ]);
      expect(hook.requests().every((r) => r.headers['x-token'] === 'abc')).toBe(true);
    });

    it('failure, rerun and skip: WORKFLOW_FAILED, WORKFLOW_RERUN, TASK_RERUN, TASK_SKIPPED', async () => {
      const hook = webhook();
      const ex = await start('ntf_fail', [hook.publisher]);
      expect((await waitForExecution(stack.client, ex.id)).state).toBe('ERROR');
      const a = await waitForTask(stack.client, ex.id, 'a', 'ERROR');
      expect(names(await settle(hook.events, 4))).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED:a',
        'TASK_FAILED:a',
        'WORKFLOW_FAILED',
      ]);
      expect((await put(`/v2/tasks/${a.id}`, { state: 'RUNNING', reset: true })).status).toBe(200);
      await settle(hook.events, 8);
      expect((await waitForExecution(stack.client, ex.id)).state).toBe('ERROR');
      expect((await put(`/v2/tasks/${a.id}`, { state: 'SKIPPED' })).status).toBe(200);
      expect((await waitForExecution(stack.client, ex.id, ['SUCCESS'])).state).toBe('SUCCESS');
      const events = await settle(hook.events, 13);
      expect(names(events)).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED:a',
        'TASK_FAILED:a',
        'WORKFLOW_FAILED',
        'WORKFLOW_RERUN',
        'TASK_RERUN:a',
        'TASK_FAILED:a',
        'WORKFLOW_FAILED',
        'WORKFLOW_RERUN',
        'TASK_SKIPPED:a',
        'TASK_LAUNCHED:b',
        'TASK_SUCCEEDED:b',
        'WORKFLOW_SUCCEEDED',
      ]);
      events.forEach(checkShape);
      expect(events[9]).toMatchObject({ state: 'SKIPPED', state_info: 'Task was skipped.' });
    });

    it('event_types filters the events; notify reaches sub-executions with their root and parent task', async () => {
      const all = webhook();
      const some = webhook({ event_types: ['WORKFLOW_SUCCEEDED', 'TASK_SUCCEEDED'] });
      const ex = await start('ntf_parent', [all.publisher, some.publisher]);
      expect((await waitForExecution(stack.client, ex.id)).state).toBe('SUCCESS');
      const events = await settle(all.events, 8);
      const child = (
        (await stack.client.get(`/v2/executions?root_execution_id=${ex.id}`)).body.executions as any[]
      )[0];
      const call = ((await stack.client.get(`/v2/executions/${ex.id}/tasks`)).body.tasks as any[])[0];
      const of = (id: string) =>
        names(events.filter((e) => e['id'] === id || e['workflow_execution_id'] === id));
      expect(of(ex.id)).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED:call',
        'TASK_SUCCEEDED:call',
        'WORKFLOW_SUCCEEDED',
      ]);
      expect(of(child.id)).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED:leaf',
        'TASK_SUCCEEDED:leaf',
        'WORKFLOW_SUCCEEDED',
      ]);
      expect(events).toHaveLength(8);
      // the child starts after the parent task launched and ends before the parent task succeeds
      const at = (pred: (e: Event) => boolean) => events.findIndex(pred);
      expect(at((e) => e['id'] === child.id && e['event'] === 'WORKFLOW_LAUNCHED')).toBeGreaterThan(
        at((e) => e['event'] === 'TASK_LAUNCHED' && e['name'] === 'call'),
      );
      expect(at((e) => e['id'] === child.id && e['event'] === 'WORKFLOW_SUCCEEDED')).toBeLessThan(
        at((e) => e['event'] === 'TASK_SUCCEEDED' && e['name'] === 'call'),
      );
      expect(events.find((e) => e['id'] === child.id && e['event'] === 'WORKFLOW_LAUNCHED')).toMatchObject({
        root_execution_id: ex.id,
        task_execution_id: call.id,
        name: 'ntf_child',
      });
      const filtered = await settle(some.events, 4);
      expect(names(filtered).sort()).toEqual([
        'TASK_SUCCEEDED:call',
        'TASK_SUCCEEDED:leaf',
        'WORKFLOW_SUCCEEDED',
        'WORKFLOW_SUCCEEDED',
      ]);
    });

    it('a paused sub-workflow: TASK_PAUSED then WORKFLOW_PAUSED of the parent; TASK_RESUMED then WORKFLOW_RESUMED on resume', async () => {
      const hook = webhook();
      const ex = await start('ntf_nested_async', [hook.publisher]);
      const call = await waitForTask(stack.client, ex.id, 'call', 'RUNNING');
      let child: any;
      for (let i = 0; i < 400 && !child; i++) {
        child = (
          (await stack.client.get(`/v2/executions?task_execution_id=${call.id}`)).body.executions as any[]
        )[0];
        if (!child) await new Promise((r) => setTimeout(r, 25));
      }
      await waitForTask(stack.client, child.id, 'a', 'RUNNING');
      expect((await put(`/v2/executions/${child.id}`, { state: 'PAUSED' })).status).toBe(200);
      await waitForExecution(stack.client, ex.id, ['PAUSED']);
      expect((await put(`/v2/executions/${child.id}`, { state: 'RUNNING' })).status).toBe(200);
      await waitForExecution(stack.client, ex.id, ['RUNNING']);
      expect((await put(`/v2/executions/${ex.id}`, { state: 'CANCELLED' })).status).toBe(200);
      await waitForExecution(stack.client, child.id, ['CANCELLED']);
      const events = await settle(hook.events, 13);
      const of = (id: string) =>
        names(events.filter((e) => e['id'] === id || e['workflow_execution_id'] === id));
      expect(of(ex.id)).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED:call',
        'TASK_PAUSED:call',
        'WORKFLOW_PAUSED',
        'TASK_RESUMED:call',
        'WORKFLOW_RESUMED',
        'WORKFLOW_CANCELLED',
        // the cancelled child still reports to its task, which records it (DSL-15.3 leaves it running)
        'TASK_CANCELLED:call',
      ]);
      expect(of(child.id)).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED:a',
        'WORKFLOW_PAUSED',
        'WORKFLOW_RESUMED',
        'WORKFLOW_CANCELLED',
      ]);
      events.forEach(checkShape);
      expect(events.find((e) => e['event'] === 'TASK_PAUSED')).toMatchObject({
        id: call.id,
        state: 'PAUSED',
        type: 'WORKFLOW',
      });
    });

    it('a failing or slow receiver is retried with a bounded timeout and never holds up the engine', async () => {
      const hook = webhook();
      const path = new URL(hook.publisher.url).pathname;
      let seen = 0;
      // 1st request: no answer until the publisher gives up on it (the attempt is bounded);
      // 2nd request (its retry): 503; every later request: 200
      answer = (req, res) => {
        if (req.url !== path) return void res.writeHead(200).end();
        seen++;
        if (seen === 1) setTimeout(() => res.writeHead(200).end(), 12_000).unref();
        else if (seen === 2) res.writeHead(503).end();
        else res.writeHead(200).end();
      };
      try {
        const began = Date.now();
        const ex = await start('ntf_three', [hook.publisher]);
        const done = await waitForExecution(stack.client, ex.id);
        expect(done.state).toBe('SUCCESS');
        // the execution finished while the first event was still waiting for its receiver
        expect(Date.now() - began).toBeLessThan(4_000);
        expect(hook.requests().length).toBeLessThanOrEqual(1);
        const requests = await settle(hook.requests, 10, 30_000);
        const events = requests.map((r) => JSON.parse(r.body) as Event);
        // at least once: the first event arrives three times (timed out, 503, 200), then the rest in order
        expect(names(events)).toEqual([
          'WORKFLOW_LAUNCHED',
          'WORKFLOW_LAUNCHED',
          'WORKFLOW_LAUNCHED',
          'TASK_LAUNCHED:a',
          'TASK_SUCCEEDED:a',
          'TASK_LAUNCHED:b',
          'TASK_SUCCEEDED:b',
          'TASK_LAUNCHED:c',
          'TASK_SUCCEEDED:c',
          'WORKFLOW_SUCCEEDED',
        ]);
        // the first attempt was cut off by the publisher's attempt timeout (5 s), well before 12 s
        expect(Date.now() - began).toBeLessThan(11_000);
      } finally {
        answer = (_req, res) => res.writeHead(200).end();
      }
    });
  });

  it('a webhook that does not answer holds up only its own execution tree, not the others', async () => {
    const slow = webhook();
    const slowPath = new URL(slow.publisher.url).pathname;
    const held: ServerResponse[] = [];
    answer = (req, res) => {
      if (req.url === slowPath) held.push(res);
      else res.writeHead(200).end();
    };
    try {
      const stuck = await start('ntf_three', [slow.publisher]);
      await waitForExecution(stack.client, stuck.id);
      // another execution on another notify queue (they are spread by root execution)
      let other: Record<string, any> | undefined;
      let fast = webhook();
      for (let i = 0; i < 20 && !other; i++) {
        fast = webhook();
        const candidate = await start('ntf_three', [fast.publisher]);
        await waitForExecution(stack.client, candidate.id);
        if (notifyQueueOf(candidate.id) !== notifyQueueOf(stuck.id)) other = candidate;
      }
      expect(other).toBeDefined();
      const began = Date.now();
      const events = await settle(fast.events, 8, 4_000);
      expect(names(events)).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED:a',
        'TASK_SUCCEEDED:a',
        'TASK_LAUNCHED:b',
        'TASK_SUCCEEDED:b',
        'TASK_LAUNCHED:c',
        'TASK_SUCCEEDED:c',
        'WORKFLOW_SUCCEEDED',
      ]);
      expect(Date.now() - began).toBeLessThan(4_500);
      // meanwhile the stuck execution's first event is still being retried
      expect(slow.requests().length).toBeLessThanOrEqual(2);
    } finally {
      answer = (_req, res) => res.writeHead(200).end();
      // release the held request so that its queue drains before the next tests
      for (const res of held.splice(0)) if (!res.destroyed) res.writeHead(200).end();
      await settle(() => [...new Set(slow.events().map((e) => e['event'] + String(e['name'])))], 8, 20_000);
    }
  });

  describe('amqp', () => {
    it('events go to the configured exchange, routed by event name, in order; an entry may name its exchange and key', async () => {
      const q = await ch.assertQueue('', { exclusive: true, autoDelete: true });
      const other = await ch.assertQueue('', { exclusive: true, autoDelete: true });
      await ch.bindQueue(q.queue, exchange, '#');
      await ch.bindQueue(other.queue, otherExchange, 'mine');
      const got: { key: string; type: string | undefined; body: Event; ct: string | undefined }[] = [];
      const gotOther: Event[] = [];
      await ch.consume(
        q.queue,
        (m) =>
          m &&
          got.push({
            key: m.fields.routingKey,
            type: m.properties.type as string,
            body: JSON.parse(m.content.toString()),
            ct: m.properties.contentType as string,
          }),
        { noAck: true },
      );
      await ch.consume(other.queue, (m) => m && gotOther.push(JSON.parse(m.content.toString())), {
        noAck: true,
      });
      const ex = await start('ntf_handled', [
        { type: 'amqp' },
        { type: 'amqp', exchange: otherExchange, routing_key: 'mine', event_types: ['WORKFLOW_SUCCEEDED'] },
      ]);
      expect((await waitForExecution(stack.client, ex.id)).state).toBe('SUCCESS');
      const mine = (
        await settle(
          () => got.filter((m) => m.body['id'] === ex.id || m.body['workflow_execution_id'] === ex.id),
          8,
        )
      ).map((m) => m);
      expect(names(mine.map((m) => m.body))).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED:a',
        'TASK_SUCCEEDED:a',
        'TASK_LAUNCHED:b',
        'TASK_FAILED:b',
        'TASK_LAUNCHED:c',
        'TASK_SUCCEEDED:c',
        'WORKFLOW_SUCCEEDED',
      ]);
      for (const m of mine) {
        expect(m.key).toBe(m.body['event']);
        expect(m.type).toBe(m.body['event']);
        expect(m.ct).toBe('application/json');
        checkShape(m.body);
      }
      expect(mine[0]!.body).toMatchObject({
        id: ex.id,
        workflow_name: 'ntf_handled',
        state: 'RUNNING',
        root_execution_id: null,
      });
      const others = await settle(() => gotOther.filter((e) => e['id'] === ex.id), 1);
      expect(others.map((e) => e['event'])).toEqual(['WORKFLOW_SUCCEEDED']);
    });

    it('pause, resume and cancel reach the queue in order, next to a webhook receiving the same events', async () => {
      const q = await ch.assertQueue('', { exclusive: true, autoDelete: true });
      for (const key of ['WORKFLOW_LAUNCHED', 'WORKFLOW_PAUSED', 'WORKFLOW_RESUMED', 'WORKFLOW_CANCELLED'])
        await ch.bindQueue(q.queue, exchange, key);
      const got: Event[] = [];
      await ch.consume(q.queue, (m) => m && got.push(JSON.parse(m.content.toString())), { noAck: true });
      const hook = webhook({
        event_types: ['WORKFLOW_PAUSED', 'WORKFLOW_RESUMED', 'WORKFLOW_CANCELLED', 'WORKFLOW_LAUNCHED'],
      });
      const ex = await start('ntf_async', [{ type: 'amqp' }, hook.publisher]);
      await waitForTask(stack.client, ex.id, 'a', 'RUNNING');
      await put(`/v2/executions/${ex.id}`, { state: 'PAUSED' });
      await put(`/v2/executions/${ex.id}`, { state: 'RUNNING' });
      await put(`/v2/executions/${ex.id}`, { state: 'CANCELLED', state_info: 'bye' });
      const events = await settle(() => got.filter((e) => e['id'] === ex.id), 4);
      expect(events.map((e) => e['event'])).toEqual([
        'WORKFLOW_LAUNCHED',
        'WORKFLOW_PAUSED',
        'WORKFLOW_RESUMED',
        'WORKFLOW_CANCELLED',
      ]);
      expect(events[3]).toMatchObject({ state: 'CANCELLED', state_info: 'bye' });
      expect((await settle(hook.events, 4)).map((e) => e['event'])).toEqual(events.map((e) => e['event']));
    });
  });
});

describe.each(e2eModes())('notifications with two engine instances (%s)', (mode) => {
  let stack: EngineStack;
  let rx: Awaited<ReturnType<typeof startHttpServer>>;

  beforeAll(async () => {
    // a receiver answering after a random few ms, so that concurrent deliveries would overtake each other
    rx = await startHttpServer(
      (_req, res) => void setTimeout(() => res.writeHead(200).end(), Math.random() * 5),
    );
    stack = await startEngineStack(mode, { engines: 2 });
    const res = await stack.client.post('/v2/workflows', DEFINITIONS);
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await rx?.close();
  }, 60_000);

  it('every execution sees its events in order, although both engines deliver notifications', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await postJson(stack.client, '/v2/executions', {
        workflow_name: 'ntf_three',
        params: { notify: [{ type: 'webhook', url: `${rx.url}/all` }] },
      });
      ids.push(res.body.id as string);
    }
    for (const id of ids) expect((await waitForExecution(stack.client, id)).state).toBe('SUCCESS');
    const deadline = Date.now() + 20_000;
    while (rx.requests.length < ids.length * 8 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const events = rx.requests.map((r) => JSON.parse(r.body) as Event);
    const want = [
      'WORKFLOW_LAUNCHED',
      'TASK_LAUNCHED:a',
      'TASK_SUCCEEDED:a',
      'TASK_LAUNCHED:b',
      'TASK_SUCCEEDED:b',
      'TASK_LAUNCHED:c',
      'TASK_SUCCEEDED:c',
      'WORKFLOW_SUCCEEDED',
    ];
    for (const id of ids) {
      expect({
        id,
        events: names(events.filter((e) => e['id'] === id || e['workflow_execution_id'] === id)),
      }).toEqual({ id, events: want });
    }
  });
});
