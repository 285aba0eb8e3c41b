import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { testServers } from '@osc/testing';
import { e2eModes } from './support/api-server';
import { type EngineStack, postJson, startEngineStack } from './support/engine-stack';

jest.setTimeout(180_000);

const A = { 'x-project-id': 'stream-a', 'x-user-id': 'alice', 'x-roles': 'member' };
const B = { 'x-project-id': 'stream-b', 'x-user-id': 'bob', 'x-roles': 'member' };
const ADMIN = { 'x-project-id': 'stream-admin', 'x-user-id': 'root', 'x-roles': 'admin' };

const WF = `
version: '2.0'
streamed:
  input: [fail]
  tasks:
    first:
      with-items: i in [1, 2]
      action: std.echo output=<% $.i %>
      on-success: [child]
    child:
      workflow: streamed_leaf
      on-success: [last]
    last:
      action: std.fail
      retry: {count: 1, delay: 0}
      on-error: [ended]
    ended:
      action: std.echo output=<% $.fail %>
      on-success:
        - failing: <% $.fail %>
    failing:
      action: std.fail
streamed_leaf:
  tasks:
    inner:
      action: std.echo output="leaf"
`;

const TERMINAL = new Set(['SUCCESS', 'ERROR', 'CANCELLED']);

interface Change {
  position: number;
  seq: number;
  project_id: string;
  root_execution_id: string;
  execution_id: string;
  subject: string;
  name: string;
  state: string;
  previous_state: string | null;
}

/**
 * A project stream being read: `opened` resolves with the `event: position` id (the stream is live),
 * `result` once `done(changes)` holds (or `stopAfter` changes came); then it disconnects. Rejects
 * when the stream ends by itself or nothing satisfies `done` within 90 s.
 */
function followProjectStream(
  url: string,
  headers: Record<string, string>,
  done: (changes: Change[]) => boolean,
  stopAfter = Infinity,
): { opened: Promise<number>; result: Promise<{ changes: Change[]; ids: number[]; start: number }> } {
  const ctrl = new AbortController();
  let open!: (p: number) => void;
  let fail!: (e: unknown) => void;
  const opened = new Promise<number>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  const result = (async () => {
    const timer = setTimeout(() => ctrl.abort(new Error('project stream: no end within 90 s')), 90_000);
    try {
      const res = await fetch(url, {
        headers: { accept: 'text/event-stream', ...headers },
        signal: ctrl.signal,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      const out = { changes: [] as Change[], ids: [] as number[], start: -1 };
      let buf = '';
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended) throw new Error('the project stream ended by itself');
        buf += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const id = /^id: (\d+)$/m.exec(block)?.[1];
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === 'position') {
            expect(out.start).toBe(-1);
            expect(JSON.parse(data ?? '{}')).toEqual({ position: Number(id) });
            out.start = Number(id);
            open(out.start);
          } else if (event === 'execution' && id && data) {
            out.ids.push(Number(id));
            out.changes.push(JSON.parse(data) as Change);
            if (out.changes.length >= stopAfter || done(out.changes)) {
              ctrl.abort();
              return out;
            }
          }
        }
      }
    } catch (err) {
      fail(err);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  })();
  result.catch(() => undefined);
  return { opened, result };
}

describe.each(e2eModes())('project stream of execution state changes (%s)', (mode) => {
  let stack: EngineStack;

  beforeAll(async () => {
    stack = await startEngineStack(mode, { authMode: 'headers' });
    for (const who of [A, B]) expect((await stack.client.as(who).post('/v2/workflows', WF)).status).toBe(201);
  });
  afterAll(async () => {
    await stack?.close();
  });

  const start = async (who: Record<string, string>, fail: boolean) => {
    const res = await postJson(stack.client.as(who), '/v2/executions', {
      workflow_name: 'streamed',
      input: JSON.stringify({ fail }),
    });
    expect(res.status).toBe(201);
    return String(res.body.id);
  };

  /** The history's execution entries of these roots and their sub-workflows (the truth the stream must match). */
  const historyOf = async (who: Record<string, string>, roots: readonly string[]) => {
    const out = new Map<
      string,
      { execution_id: string; seq: number; state: string; previous_state: string | null }[]
    >();
    for (const root of roots) {
      const res = await stack.client.as(who).get(`/v2/executions/${root}/events?limit=1000`);
      expect(res.status).toBe(200);
      for (const e of res.body.events as Change[]) {
        if (e.subject !== 'execution') continue;
        const list = out.get(e.execution_id) ?? [];
        list.push({
          execution_id: e.execution_id,
          seq: e.seq,
          state: e.state,
          previous_state: e.previous_state,
        });
        out.set(e.execution_id, list);
      }
    }
    return out;
  };

  const byExecution = (changes: readonly Change[]) => {
    const out = new Map<
      string,
      { execution_id: string; seq: number; state: string; previous_state: string | null }[]
    >();
    for (const c of changes) {
      const list = out.get(c.execution_id) ?? [];
      list.push({
        execution_id: c.execution_id,
        seq: c.seq,
        state: c.state,
        previous_state: c.previous_state,
      });
      out.set(c.execution_id, list);
    }
    return out;
  };

  /** All these roots and the sub-workflows under them ended. */
  const allEnded = (roots: readonly string[]) => (changes: Change[]) => {
    const last = new Map<string, string>();
    for (const c of changes) last.set(c.execution_id, c.state);
    const subsOf = new Map<string, Set<string>>();
    for (const c of changes)
      if (c.execution_id !== c.root_execution_id)
        subsOf.set(c.root_execution_id, (subsOf.get(c.root_execution_id) ?? new Set()).add(c.execution_id));
    return roots.every(
      (r) =>
        TERMINAL.has(last.get(r) ?? '') &&
        [...(subsOf.get(r) ?? [])].every((s) => TERMINAL.has(last.get(s) ?? '')),
    );
  };

  const expectOnceInOrder = async (
    who: Record<string, string>,
    roots: readonly string[],
    changes: readonly Change[],
    ids: readonly number[],
  ) => {
    // ids are the positions, strictly increasing; each change once
    expect(ids).toEqual(changes.map((c) => c.position));
    for (let i = 1; i < ids.length; i++) expect(ids[i]!).toBeGreaterThan(ids[i - 1]!);
    const mine = changes.filter((c) => roots.includes(c.root_execution_id));
    expect(byExecution(mine)).toEqual(await historyOf(who, roots));
    for (const c of mine) expect(c).toMatchObject({ project_id: who['x-project-id'], subject: 'execution' });
  };

  it("delivers every state change of the project's executions once and in order, and nothing of other projects", async () => {
    const roots: string[] = [];
    const follow = followProjectStream(
      `${stack.baseUrl}/v2/executions`,
      A,
      (c) => roots.length === 4 && allEnded(roots)(c),
    );
    await follow.opened;
    const other = await start(B, false);
    roots.push(...(await Promise.all([start(A, false), start(A, true), start(A, false), start(A, true)])));
    const { changes, ids } = await follow.result;
    await expectOnceInOrder(A, roots, changes, ids);
    // sub-workflows came too, failures end in ERROR, and project B's execution never showed
    expect(
      new Set(changes.filter((c) => c.execution_id !== c.root_execution_id).map((c) => c.root_execution_id)),
    ).toEqual(new Set(roots));
    expect(
      changes
        .filter((c) => roots.includes(c.execution_id) && TERMINAL.has(c.state))
        .map((c) => c.state)
        .sort(),
    ).toEqual(['ERROR', 'ERROR', 'SUCCESS', 'SUCCESS']);
    expect(changes.some((c) => c.root_execution_id === other || c.project_id !== A['x-project-id'])).toBe(
      false,
    );
  });

  it('a client that reconnects with Last-Event-ID misses nothing and gets nothing twice', async () => {
    const roots: string[] = [];
    const first = followProjectStream(`${stack.baseUrl}/v2/executions`, A, () => false, 3);
    await first.opened;
    roots.push(...(await Promise.all([start(A, false), start(A, true), start(A, false)])));
    const part = await first.result;
    expect(part.changes).toHaveLength(3);
    const rest = await followProjectStream(
      `${stack.baseUrl}/v2/executions`,
      { ...A, 'last-event-id': String(part.ids.at(-1)) },
      (c) => allEnded(roots)([...part.changes, ...c]),
    ).result;
    expect(rest.start).toBe(part.ids.at(-1));
    await expectOnceInOrder(A, roots, [...part.changes, ...rest.changes], [...part.ids, ...rest.ids]);
    // ?marker= resumes the same way on a first connection
    const again = await followProjectStream(`${stack.baseUrl}/v2/executions?marker=${part.start}`, A, (c) =>
      allEnded(roots)(c),
    ).result;
    expect(again.changes.filter((c) => roots.includes(c.root_execution_id))).toEqual(
      [...part.changes, ...rest.changes].filter((c) => roots.includes(c.root_execution_id)),
    );
  });

  it('all_projects: 403 for a member, every project for an admin; bad positions are 400', async () => {
    const denied = await fetch(`${stack.baseUrl}/v2/executions?all_projects=true`, {
      headers: { accept: 'text/event-stream', ...A },
    });
    expect(denied.status).toBe(403);
    await denied.text();
    const roots: string[] = [];
    const follow = followProjectStream(
      `${stack.baseUrl}/v2/executions?all_projects=true`,
      ADMIN,
      (c) => roots.length === 2 && allEnded(roots)(c),
    );
    await follow.opened;
    roots.push(await start(A, false), await start(B, false));
    const { changes } = await follow.result;
    expect(
      new Set(changes.filter((c) => roots.includes(c.root_execution_id)).map((c) => c.project_id)),
    ).toEqual(new Set([A['x-project-id'], B['x-project-id']]));
    for (const bad of [{ 'last-event-id': 'x1' }, { 'last-event-id': '-1' }]) {
      const res = await fetch(`${stack.baseUrl}/v2/executions`, {
        headers: { accept: 'text/event-stream', ...A, ...bad },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { faultstring: string }).faultstring).toContain('Last-Event-ID');
    }
    const unknown = await fetch(`${stack.baseUrl}/v2/executions?state=RUNNING`, {
      headers: { accept: 'text/event-stream', ...A },
    });
    expect(unknown.status).toBe(400);
    await unknown.text();
  });

  if (mode === 'postgres') {
    it('distributed, two API processes: each streams what the engine commits, and a client moves between them with Last-Event-ID', async () => {
      const port = await new Promise<number>((resolve) => {
        const srv = createServer().listen(0, '127.0.0.1', () => {
          const a = srv.address();
          srv.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
        });
      });
      const prefix = stack.testRuntime.queuePrefix as string;
      const url = new URL(testServers().postgresUrl);
      url.pathname = `/${prefix.slice(0, -1)}`;
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
            AUTH_MODE: 'headers',
            LOG_LEVEL: 'warn',
            DB_POOL_SIZE: '3',
            WORKFLOW_API_SYSTEM_WORKFLOWS: 'false',
          },
          stdio: 'ignore',
        },
      );
      try {
        const other = `http://127.0.0.1:${port}`;
        const deadline = Date.now() + 90_000;
        while (
          (await fetch(`${other}/readyz`)
            .then((r) => r.status)
            .catch(() => 0)) !== 200
        ) {
          if (Date.now() > deadline) throw new Error('second API not ready');
          await new Promise((r) => setTimeout(r, 200));
        }
        const roots: string[] = [];
        const onOther = followProjectStream(
          `${other}/v2/executions`,
          A,
          (c) => roots.length === 3 && allEnded(roots)(c),
        );
        const firstPart = followProjectStream(`${stack.baseUrl}/v2/executions`, A, () => false, 2);
        await Promise.all([onOther.opened, firstPart.opened]);
        roots.push(...(await Promise.all([start(A, false), start(A, true), start(A, false)])));
        const whole = await onOther.result;
        await expectOnceInOrder(A, roots, whole.changes, whole.ids);
        // two changes from the first process, the rest from the second after Last-Event-ID
        const part = await firstPart.result;
        const rest = await followProjectStream(
          `${other}/v2/executions`,
          { ...A, 'last-event-id': String(part.ids.at(-1)) },
          (c) => allEnded(roots)([...part.changes, ...c]),
        ).result;
        await expectOnceInOrder(A, roots, [...part.changes, ...rest.changes], [...part.ids, ...rest.ids]);
      } finally {
        child.kill('SIGKILL');
      }
    });
  }
});
