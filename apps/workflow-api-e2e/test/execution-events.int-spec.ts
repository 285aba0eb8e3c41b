import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { testServers } from '@osc/testing';
import { e2eModes } from './support/api-server';
import { type EngineStack, postJson, startEngineStack, waitForExecution } from './support/engine-stack';

jest.setTimeout(120_000);

const WF = `
version: '2.0'
watched:
  tasks:
    first:
      wait-before: 1
      with-items: i in [1, 2, 3]
      action: std.echo output=<% $.i %>
      publish:
        got: <% task().result %>
      on-success: [child]
    child:
      workflow: leaf
      on-success: [flaky]
    flaky:
      action: std.fail
      retry: {count: 1, delay: 0}
      on-error: [done]
    done:
      action: std.noop
leaf:
  tasks:
    inner:
      action: std.echo output="leaf"
`;

interface Ev {
  seq: number;
  execution_id: string;
  subject: string;
  name: string;
  state: string;
  previous_state: string | null;
  details: Record<string, unknown>;
}

/** Reads an SSE response until it ends or `stopAfter` events came; returns the events and their ids. */
async function readStream(
  url: string,
  headers: Record<string, string>,
  stopAfter = Infinity,
): Promise<{ events: Ev[]; ids: number[]; ended: boolean; contentType: string | null }> {
  const ctrl = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ctrl.signal });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const events: Ev[] = [];
  const ids: number[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { events, ids, ended: true, contentType: res.headers.get('content-type') };
    buf += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const id = /^id: (\d+)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (id && data) {
        ids.push(Number(id));
        events.push(JSON.parse(data) as Ev);
        if (events.length >= stopAfter) {
          ctrl.abort();
          return { events, ids, ended: false, contentType: res.headers.get('content-type') };
        }
      }
    }
  }
}

describe.each(e2eModes())('execution event history and stream (%s)', (mode) => {
  let stack: EngineStack;

  beforeAll(async () => {
    stack = await startEngineStack(mode);
    expect((await stack.client.post('/v2/workflows', WF)).status).toBe(201);
  });
  afterAll(async () => {
    await stack?.close();
  });

  const start = async () => {
    const res = await postJson(stack.client, '/v2/executions', { workflow_name: 'watched' });
    expect(res.status).toBe(201);
    return String(res.body.id);
  };
  const allEvents = async (id: string, limit = 7): Promise<Ev[]> => {
    const out: Ev[] = [];
    let marker = 0;
    for (;;) {
      const res = await stack.client.get(`/v2/executions/${id}/events?marker=${marker}&limit=${limit}`);
      expect(res.status).toBe(200);
      const page = res.body.events as Ev[];
      out.push(...page);
      if (!res.body.next) return out;
      expect(page).toHaveLength(limit);
      marker = page.at(-1)!.seq;
    }
  };

  it('streams every change live, once and in order, and ends after the terminal entry', async () => {
    const id = await start();
    const streamed = await readStream(`${stack.baseUrl}/v2/executions/${id}/events`, {});
    expect(streamed.ended).toBe(true);
    expect(streamed.contentType).toMatch(/^text\/event-stream/);
    const done = await waitForExecution(stack.client, id);
    expect([done.state, done.state_info]).toEqual(['SUCCESS', null]);
    // the same history as the paged JSON list, ids are the sequence numbers, strictly increasing
    const listed = await allEvents(id);
    expect(streamed.events).toEqual(listed);
    expect(streamed.ids).toEqual(listed.map((e) => e.seq));
    for (let i = 1; i < listed.length; i++) expect(listed[i]!.seq).toBeGreaterThan(listed[i - 1]!.seq);
    expect(listed.at(-1)).toMatchObject({ subject: 'execution', execution_id: id, state: 'SUCCESS' });

    const line = (e: Ev) => `${e.subject} ${e.name} ${e.previous_state ?? '-'}>${e.state}`;
    const lines = listed.filter((e) => e.execution_id === id).map(line);
    expect(lines[0]).toBe('execution watched ->RUNNING');
    expect(lines).toContain(
      'task first ->WAITING'.replace(
        'WAITING',
        lines.find((l) => l.startsWith('task first ->'))!.split('>')[1]!,
      ),
    );
    // with-items progress to 3 of 3 and the published name
    const first = listed.filter((e) => e.subject === 'task' && e.name === 'first');
    expect(first.at(-1)).toMatchObject({
      state: 'SUCCESS',
      details: { withItems: { done: 3, total: 3 }, published: ['got'] },
    });
    // the retry: the failing action twice, the attempt number on the task
    expect(
      listed.filter((e) => e.subject === 'action' && e.name === 'std.fail' && e.state === 'ERROR'),
    ).toHaveLength(2);
    expect(listed.some((e) => e.subject === 'task' && e.name === 'flaky' && e.details['retryNo'] === 1)).toBe(
      true,
    );
    // the sub-workflow's entries are in the root's history, and its own history has only them
    const sub = listed.find((e) => e.subject === 'execution' && e.name === 'leaf')!;
    expect(sub).toBeDefined();
    const subOnly = await allEvents(sub.execution_id, 100);
    expect(subOnly.length).toBeGreaterThan(2);
    expect(subOnly).toEqual(listed.filter((e) => e.execution_id === sub.execution_id));
  });

  it('a client that reconnects with Last-Event-ID misses nothing and gets nothing twice', async () => {
    const id = await start();
    const part = await readStream(`${stack.baseUrl}/v2/executions/${id}/events`, {}, 3);
    expect(part.events).toHaveLength(3);
    const rest = await readStream(`${stack.baseUrl}/v2/executions/${id}/events`, {
      'last-event-id': String(part.ids.at(-1)),
    });
    expect(rest.ended).toBe(true);
    expect([...part.events, ...rest.events]).toEqual(await allEvents(id, 1000));
    // a finished execution read to the end: the stream closes at once
    const again = await readStream(`${stack.baseUrl}/v2/executions/${id}/events`, {
      'last-event-id': String(rest.ids.at(-1)),
    });
    expect(again).toMatchObject({ events: [], ended: true });
  });

  it('answers 404 for an unknown execution and 400 for a bad marker; history goes with its execution', async () => {
    expect(
      (await stack.client.get(`/v2/executions/00000000-0000-4000-8000-000000000000/events`)).status,
    ).toBe(404);
    const id = await start();
    await waitForExecution(stack.client, id);
    expect((await stack.client.get(`/v2/executions/${id}/events?marker=x`)).status).toBe(400);
    const db = stack.testRuntime.runtime.dataSource;
    const count = async () =>
      Number(
        (
          await db.query(
            `SELECT count(*)::int AS "n" FROM "execution_events" WHERE "root_execution_id" = $1`,
            [id],
          )
        )[0].n,
      );
    // the rows pack the events of one engine transaction each: count the events, then the rows
    expect((await allEvents(id, 1000)).length).toBeGreaterThan(10);
    expect(await count()).toBeGreaterThan(0);
    expect((await stack.client.delete(`/v2/executions/${id}`)).status).toBe(204);
    expect(await count()).toBe(0);
  });

  if (mode === 'postgres') {
    it('an API process that runs no engine streams what engines elsewhere commit (LISTEN/NOTIFY), listening only while watched', async () => {
      const port = await new Promise<number>((resolve) => {
        const srv = createServer().listen(0, '127.0.0.1', () => {
          const a = srv.address();
          srv.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
        });
      });
      const prefix = stack.testRuntime.queuePrefix as string;
      const url = new URL(testServers().postgresUrl);
      url.pathname = `/${prefix.slice(0, -1)}`;
      const app = `events-listen-${process.pid}`;
      url.searchParams.set('application_name', app);
      // the second API's connections subscribed to the engines' announcements now
      const subscribed = async (): Promise<number> =>
        Number(
          (
            await stack.testRuntime.runtime.dataSource.query(
              `SELECT count(*) AS "n" FROM pg_stat_activity WHERE "application_name" = $1 AND "query" LIKE 'LISTEN %'`,
              [app],
            )
          )[0].n,
        );
      // processes registered as listeners: engines announce (NOTIFY) only while there is one
      const registered = async (): Promise<number> =>
        Number(
          (
            await stack.testRuntime.runtime.dataSource.query(
              `SELECT count(*) AS "n" FROM "execution_stream_listeners" WHERE "expires_at" > now()`,
            )
          )[0].n,
        );
      const child: ChildProcess = spawn(
        process.execPath,
        ['-r', '@swc-node/register', 'apps/workflow-api/src/main.ts'],
        {
          cwd: path.resolve(__dirname, '../../..'),
          env: {
            ...process.env,
            DATABASE_URL: url.toString(),
            AMQP_URL: testServers().amqpUrl,
            REDIS_URL: testServers().redisUrl,
            QUEUE_PREFIX: prefix,
            WORKFLOW_API_PORT: String(port),
            WORKFLOW_API_HOST: '127.0.0.1',
            LOG_LEVEL: 'warn',
            DB_POOL_SIZE: '3',
          },
          stdio: 'ignore',
        },
      );
      try {
        const other = `http://127.0.0.1:${port}`;
        const deadline = Date.now() + 60_000;
        while (
          (await fetch(`${other}/readyz`)
            .then((r) => r.status)
            .catch(() => 0)) !== 200
        ) {
          if (Date.now() > deadline) throw new Error('second API not ready');
          await new Promise((r) => setTimeout(r, 200));
        }
        // nobody watches yet: no subscription (every NOTIFY would wake its backend for nothing)
        expect(await subscribed()).toBe(0);
        const id = await start();
        const streamed = await readStream(`${other}/v2/executions/${id}/events`, {});
        expect(streamed.ended).toBe(true);
        expect(streamed.events).toEqual(await allEvents(id, 1000));
        // the last watcher left: still subscribed (and registered) for a while (a reconnecting client), then not
        expect(await subscribed()).toBe(1);
        const whileListening = await registered();
        expect(whileListening).toBeGreaterThanOrEqual(1);
        const idleDeadline = Date.now() + 30_000;
        while ((await subscribed()) > 0) {
          if (Date.now() > idleDeadline) throw new Error('still listening 30 s after the last watcher left');
          await new Promise((r) => setTimeout(r, 500));
        }
        // its registration went with its subscription
        expect(await registered()).toBeLessThan(whileListening);
      } finally {
        child.kill('SIGKILL');
      }
    });
  }
});
