import { mkdtempSync, rmSync } from 'node:fs';
import { type Server, createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Product, kill9, startProduct, stop } from '../test/embedded-product';

type Json = Record<string, any>;

/** The executor's words for an action whose run died with its process (shared with the reconciler). */
const STOPPED = 'the executor running this action stopped before reporting a result';

async function api(base: string, method: string, url: string, body?: unknown, text = false): Promise<Json> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { 'content-type': text ? 'text/plain' : 'application/json' },
    body: body === undefined ? undefined : text ? (body as string) : JSON.stringify(body),
  });
  const json = (await res.json()) as Json;
  if (res.status >= 400) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const startExecution = async (base: string, workflow: string, input: Json = {}): Promise<string> =>
  (await api(base, 'POST', '/v2/executions', { workflow_name: workflow, input })).id as string;

const execution = (base: string, id: string): Promise<Json> => api(base, 'GET', `/v2/executions/${id}`);

async function tasks(base: string, id: string): Promise<Json[]> {
  return (await api(base, 'GET', `/v2/executions/${id}/tasks`)).tasks as Json[];
}

async function actionExecutions(base: string, id: string): Promise<Json[]> {
  const all: Json[] = [];
  for (const t of await tasks(base, id))
    all.push(
      ...((await api(base, 'GET', `/v2/tasks/${t.id}/action_executions`)).action_executions as Json[]),
    );
  return all;
}

async function poll<T>(
  what: string,
  p: Product,
  probe: () => Promise<T | undefined>,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (p.child.exitCode !== null)
      throw new Error(`product exited while waiting for ${what}:\n${p.output()}`);
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${p.output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const TERMINAL = ['SUCCESS', 'ERROR', 'CANCELLED'];

async function terminal(p: Product, id: string): Promise<Json> {
  return poll(`execution ${id} to end`, p, async () => {
    const ex = await execution(p.base, id);
    return TERMINAL.includes(ex.state as string) ? ex : undefined;
  });
}

const SLEEPERS = `version: '2.0'
sleep_plain:
  tasks:
    nap:
      action: std.sleep seconds=15
sleep_retry:
  tasks:
    nap:
      action: std.sleep seconds=15
      retry:
        count: 1
        delay: 0
sleep_safe:
  tasks:
    nap:
      action: std.sleep seconds=15
      safe-rerun: true
delayed:
  tasks:
    later:
      action: std.noop
      wait-before: 10
`;

const CALLERS = `version: '2.0'
call_plain:
  input: [url]
  tasks:
    call:
      action: std.http url=<% $.url %>
call_safe:
  input: [url]
  tasks:
    call:
      action: std.http url=<% $.url %>
      safe-rerun: true
`;

/**
 * Embedded durability (issue #15 item 1): what the in-process bus and queue held when the process
 * was killed with SIGKILL is taken up again after a restart on the same DATA_DIR, so no execution
 * stays RUNNING forever. Before the message journal, every scenario here hung.
 */
describe('embedded mode: work in flight survives kill -9', () => {
  const dirs: string[] = [];
  const running: Product[] = [];
  let server: Server | undefined;

  afterEach(async () => {
    for (const p of running.splice(0))
      if (p.child.exitCode === null && p.child.signalCode === null) await kill9(p);
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
  });
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('ends an interrupted std.sleep as its policies say, and fires a wait-before timer after the restart', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'osc-durable-'));
    dirs.push(dataDir);
    const first = await startProduct(dataDir);
    running.push(first);
    await api(first.base, 'POST', '/v2/workflows', SLEEPERS, true);
    const plain = await startExecution(first.base, 'sleep_plain');
    const retry = await startExecution(first.base, 'sleep_retry');
    const safe = await startExecution(first.base, 'sleep_safe');
    for (const id of [plain, retry, safe]) {
      await poll(`the action of ${id} to run`, first, async () =>
        (await actionExecutions(first.base, id)).some((a) => a.state === 'RUNNING') ? true : undefined,
      );
    }
    const delayed = await startExecution(first.base, 'delayed');
    await poll('the delayed task', first, async () =>
      (await tasks(first.base, delayed)).length === 1 ? true : undefined,
    );
    // Let the executor take the sleeps (claim them) and the relay hand the timer job over: from
    // here on they live only in the bus, the queue and their journal.
    await new Promise((r) => setTimeout(r, 3000));
    for (const id of [plain, retry, safe, delayed])
      expect({ id, state: (await execution(first.base, id)).state }).toEqual({ id, state: 'RUNNING' });
    await kill9(first);

    const second = await startProduct(dataDir);
    running.push(second);
    const [p, r, s, d] = [
      await terminal(second, plain),
      await terminal(second, retry),
      await terminal(second, safe),
      await terminal(second, delayed),
    ];

    // no policy: the run cut off by the kill is not repeated, the task fails saying why
    expect(p.state).toBe('ERROR');
    const [lost] = await actionExecutions(second.base, plain);
    expect(lost).toMatchObject({ state: 'ERROR' });
    expect(`${lost?.state_info} ${lost?.output}`).toContain(STOPPED);
    // retry: the interrupted attempt counts as a failure and the retry runs the action again
    expect(r.state).toBe('SUCCESS');
    expect((await actionExecutions(second.base, retry)).map((a) => a.state)).toEqual(['ERROR', 'SUCCESS']);
    // safe-rerun: the same action execution runs again
    expect(s.state).toBe('SUCCESS');
    expect((await actionExecutions(second.base, safe)).map((a) => a.state)).toEqual(['SUCCESS']);
    // the delayed job kept in the journal fires after the restart
    expect({
      state: d.state,
      tasks: (await tasks(second.base, delayed)).map((t) => [t.state, t.state_info]),
    }).toEqual({
      state: 'SUCCESS',
      tasks: [['SUCCESS', null]],
    });
    expect(await stop(second)).toBe(0);
  }, 420_000);

  it('loses nothing when killed right after an action’s side effect, and repeats it only for safe-rerun', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'osc-durable-'));
    dirs.push(dataDir);
    const hits = { plain: 0, safe: 0 };
    let victim: Product | undefined;
    let waiting = 2; // the first call of each workflow: the process dies once both are answered
    const answered: Array<Promise<void>> = [];
    server = createHttpServer((req, res) => {
      const which = req.url === '/safe' ? 'safe' : 'plain';
      hits[which]++;
      const killAfter = hits[which] === 1 && victim !== undefined;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: which }));
      if (killAfter) {
        answered.push(new Promise((resolve) => res.once('finish', () => resolve())));
        if (--waiting === 0) void Promise.all(answered).then(() => victim?.child.kill('SIGKILL'));
      }
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as { port: number }).port;

    const first = await startProduct(dataDir);
    running.push(first);
    victim = first;
    await api(first.base, 'POST', '/v2/workflows', CALLERS, true);
    const plain = await startExecution(first.base, 'call_plain', { url: `http://127.0.0.1:${port}/plain` });
    const safe = await startExecution(first.base, 'call_safe', { url: `http://127.0.0.1:${port}/safe` });
    const deadline = Date.now() + 120_000;
    while (first.child.exitCode === null && first.child.signalCode === null) {
      if (Date.now() > deadline)
        throw new Error(
          `the calls never came (plain ${hits.plain}, safe ${hits.safe}):\n${first.output().slice(-4000)}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(first.child.signalCode).toBe('SIGKILL');
    victim = undefined;

    const second = await startProduct(dataDir);
    running.push(second);
    const p = await terminal(second, plain);
    const s = await terminal(second, safe);
    // Not safe-rerun: the side effect happened exactly once. The execution succeeds when the result
    // was reported (journaled) before the kill, and fails saying why when the kill came first.
    expect(hits.plain).toBe(1);
    if (p.state === 'ERROR')
      expect(JSON.stringify(await actionExecutions(second.base, plain))).toContain(STOPPED);
    else expect(p.state).toBe('SUCCESS');
    // safe-rerun: always succeeds; the call is repeated only when the kill came before the result
    // was journaled (docs/runtime.md, "Embedded durability").
    expect(s.state).toBe('SUCCESS');
    expect(hits.safe === 1 || hits.safe === 2).toBe(true);
    expect(await stop(second)).toBe(0);
  }, 420_000);
});
