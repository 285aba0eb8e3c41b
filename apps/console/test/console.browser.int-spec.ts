/**
 * The operator console in a real browser (Debian's chromium driven by playwright-core) against the
 * real product started as `npm start` starts it (embedded mode, noauth). One scenario walks the
 * acceptance of issue #16 item 3: start an execution of a workflow with a with-items task, an
 * async task, a retried task and a sub-workflow from the console, watch its task states change on
 * /console/executions/{id} without a reload, pause and resume it from the page, rerun the task that
 * failed, follow the sub-workflow link, watch the executions list update live from the project
 * stream (no list request, no reload), evaluate expressions in the task panel's playground, and
 * see block storage. Screenshots of every page are written
 * to tmp/console-screenshots/ (gitignored), the CI artefacts.
 *
 * Nothing here waits for time to pass: every wait is for a condition on the page or the API.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '../../..');
const SHOTS = path.join(ROOT, 'tmp', 'console-screenshots');
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

const CHILD_WF = `
version: '2.0'
console_demo_child:
  tasks:
    hello:
      action: std.echo output="from the child"
      publish:
        greeting: <% task().result %>
`;

const PARENT_WF = `
version: '2.0'
console_demo:
  input:
    - url
  tasks:
    items:
      with-items: n in <% [1, 2, 3] %>
      action: std.echo output=<% $.n %>
      publish:
        numbers: <% task().result %>
      on-success: [approve]
    approve:
      # completes when the test (an outside system) posts its result
      action: std.async_noop
      on-success: [call]
    call:
      action: std.http url=<% $.url %>
      retry:
        count: 1
        delay: 0
      on-success: [child]
    child:
      workflow: console_demo_child
`;

const LIVE_WF = `
version: '2.0'
console_live:
  tasks:
    wait:
      # completes when the test posts its result
      action: std.async_noop
`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createNetServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

/** What `call` reaches: 503 until the test says the outside service is back. */
class FlakyService {
  healthy = false;
  calls = 0;
  private server: Server | undefined;
  url = '';
  async start(): Promise<void> {
    this.server = createServer((_req, res) => {
      this.calls++;
      res
        .writeHead(this.healthy ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ healthy: this.healthy }));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const addr = this.server.address();
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/service`;
  }
  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('operator console in chromium (embedded product)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'osc-console-'));
  const flaky = new FlakyService();
  let product: ChildProcess | undefined;
  let output = '';
  let base = '';
  let volumeBase = '';
  let browser: Browser | undefined;
  let page: Page;

  const api = async (method: string, url: string, body?: unknown, contentType = 'application/json') => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { 'content-type': contentType, accept: 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, any>) : {};
  };

  /** Waits until the element with this test id reads `text` (the page updates itself). */
  const expectText = async (testId: string, text: string) => {
    await page
      .getByTestId(testId)
      .filter({ hasText: new RegExp(`^\\s*${text}\\s*$`) })
      .waitFor({ timeout: 60_000 });
  };
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    // The console is built as `npm start` builds it (skipped when up to date).
    execFileSync(process.execPath, [path.join(ROOT, 'apps/console/tools/build.mjs')], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    mkdirSync(SHOTS, { recursive: true });
    await flaky.start();
    const [wfPort, volPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${wfPort}`;
    volumeBase = `http://127.0.0.1:${volPort}`;
    product = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/embedded/src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        WORKFLOW_API_PORT: String(wfPort),
        VOLUME_API_PORT: String(volPort),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    product.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    product.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    for (;;) {
      if (product.exitCode !== null) throw new Error(`product exited early:\n${output}`);
      const up = await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      const volUp = await fetch(`${volumeBase}/`).then(
        () => true,
        () => false,
      );
      if (up && volUp) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    // playwright gives every launch a fresh, empty user data directory of its own.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
    page.setDefaultTimeout(60_000);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (product && product.exitCode === null) {
      const exited = new Promise((resolve) => product?.once('exit', resolve));
      product.kill('SIGTERM');
      await exited;
    }
    await flaky.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts, watches, pauses, resumes and reruns an execution, and shows every page', async () => {
    await api('POST', '/v2/workflows', CHILD_WF, 'text/plain');
    const parent = (await api('POST', '/v2/workflows', PARENT_WF, 'text/plain'))['workflows'][0] as {
      id: string;
    };

    // Workflows: the list, then the workflow's definition (highlighted) and its task graph.
    await page.goto(`${base}/console/workflows`);
    await page.getByRole('link', { name: 'console_demo', exact: true }).click();
    await page.waitForURL(`${base}/console/workflows/${parent.id}`);
    await page.getByTestId('task-node-child').waitFor();
    expect(await page.locator('.yaml .tok-expression').first().textContent()).toBe('<% [1, 2, 3] %>');
    await shot('workflow');

    // Start an execution from the page; the console goes to its page.
    await page.getByLabel('execution input').fill(JSON.stringify({ url: flaky.url }));
    await page.getByRole('button', { name: 'Start execution' }).click();
    await page.waitForURL(/\/console\/executions\/[0-9a-f-]{36}$/);
    const executionId = page.url().split('/').pop() ?? '';
    // A mark in the page's window: still there at the end means the page was never reloaded.
    await page.evaluate(() => ((globalThis as unknown as { consoleMark: string }).consoleMark = 'same page'));

    // Task states change live: with-items done (3/3), the async task running, later tasks not reached.
    await expectText('task-state-items', 'SUCCESS');
    await expectText('task-state-approve', 'RUNNING');
    await expectText('task-state-child', 'NOT STARTED');
    await page.getByTestId('task-row-items').getByText('3/3').waitFor();
    await page.locator('[data-testid="task-node-items"][data-state="SUCCESS"]').waitFor({ state: 'visible' });
    await page.getByTestId('task-node-child').waitFor({ state: 'visible' });
    await expectText('execution-state', 'RUNNING');
    await expectText('stream-state', 'live');

    // Pause and resume from the page.
    await page.getByRole('button', { name: 'Pause' }).click();
    await expectText('execution-state', 'PAUSED');
    expect((await api('GET', `/v2/executions/${executionId}`))['state']).toBe('PAUSED');
    await shot('execution-paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await expectText('execution-state', 'RUNNING');

    // The outside system answers the async action; `call` then fails twice (one retry) on the 503.
    const tasks = (await api('GET', `/v2/executions/${executionId}/tasks`))['tasks'] as {
      id: string;
      name: string;
    }[];
    const approve = tasks.find((t) => t.name === 'approve');
    const actions = (await api('GET', `/v2/tasks/${approve?.id}/action_executions`))['action_executions'] as {
      id: string;
    }[];
    await api('PUT', `/v2/action_executions/${actions[0]?.id}`, {
      state: 'SUCCESS',
      output: JSON.stringify({ approved: true }),
    });
    await expectText('task-state-approve', 'SUCCESS');
    await expectText('task-state-call', 'ERROR');
    await expectText('execution-state', 'ERROR');
    await page.getByTestId('task-row-call').locator('td').nth(3).filter({ hasText: /^1$/ }).waitFor();
    expect(flaky.calls).toBe(2);
    await page.getByTestId('task-row-call').getByRole('button', { name: 'call' }).click();
    await page
      .getByRole('complementary', { name: 'task panel' })
      .getByText('Action executions (2)')
      .waitFor();
    await shot('execution-failed');

    // The service is back: rerun the failed task from the panel; the execution goes on to the end.
    flaky.healthy = true;
    await page.getByRole('button', { name: 'Rerun task' }).click();
    await expectText('task-state-call', 'SUCCESS');
    await expectText('task-state-child', 'SUCCESS');
    await expectText('execution-state', 'SUCCESS');
    expect(flaky.calls).toBe(3);
    expect(await page.evaluate(() => (globalThis as unknown as { consoleMark?: string }).consoleMark)).toBe(
      'same page',
    );
    await page.getByRole('table', { name: 'event history' }).getByText('items 3/3').first().waitFor();
    await page.getByTestId('task-row-call').getByRole('button', { name: 'call' }).click();
    await page.getByTestId('panel-state').filter({ hasText: 'SUCCESS' }).waitFor();
    await page.locator('[data-testid="task-node-child"][data-state="SUCCESS"]').waitFor({ state: 'visible' });
    await shot('execution');

    // The expression playground in the task panel: the task's real context, and a syntax error's place.
    const playground = page.getByRole('region', { name: 'expression playground' });
    await playground
      .getByLabel('expression', { exact: true })
      .fill('[task().name, execution().name, $.numbers.sum()]');
    await playground.getByRole('button', { name: 'Evaluate' }).click();
    await page.getByTestId('playground-result').waitFor();
    expect(JSON.parse((await page.getByTestId('playground-result').textContent()) ?? 'null')).toEqual([
      'call',
      'console_demo',
      6,
    ]);
    await playground.getByLabel('expression language').selectOption('jinja');
    await playground
      .getByLabel('expression', { exact: true })
      .fill('task().state ~ " after " ~ (_.numbers | length)');
    await playground.getByRole('button', { name: 'Evaluate' }).click();
    await page.getByTestId('playground-result').filter({ hasText: '"SUCCESS after 3"' }).waitFor();
    await playground.getByLabel('expression language').selectOption('yaql');
    await playground.getByLabel('expression', { exact: true }).fill('$.numbers +* 1');
    await playground.getByRole('button', { name: 'Evaluate' }).click();
    await page
      .getByTestId('playground-position')
      .filter({ hasText: 'line 1, column 12 (position 11)' })
      .waitFor();
    expect(await page.getByTestId('playground-caret').textContent()).toBe('$.numbers +* 1\n           ^');
    await shot('playground');

    // Sub-workflow drill-down.
    await page.getByTestId('task-row-child').getByRole('link', { name: 'sub-workflow' }).click();
    await page.waitForURL(/\/console\/executions\/[0-9a-f-]{36}$/);
    expect(page.url()).not.toContain(executionId);
    await expectText('task-state-hello', 'SUCCESS');
    await expectText('execution-state', 'SUCCESS');
    await shot('sub-execution');

    // Executions: the list with its filters (state ERROR excludes the successful executions).
    await page.getByRole('link', { name: 'Executions', exact: true }).click();
    await page.getByTestId(`execution-row-${executionId}`).getByText('SUCCESS').waitFor();
    await shot('executions');
    await page.getByLabel('State').selectOption('ERROR');
    await page.getByText('No execution matches.').waitFor();
    await page.getByLabel('State').selectOption('SUCCESS');
    await page.getByLabel('Workflow').fill('console_demo_child');
    // (the parent's row is already gone under the ERROR filter: wait for the child's row to come)
    const executionsTable = page.getByRole('table', { name: 'executions' });
    await executionsTable.getByText('console_demo_child').first().waitFor();
    await page.getByTestId(`execution-row-${executionId}`).waitFor({ state: 'detached' });
    expect(await executionsTable.getByText('console_demo_child').count()).toBe(1);

    // The list is live (the project stream, no polling): a new execution shows up, then its row
    // turns SUCCESS with no list request and no reload.
    const listReads: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'GET' && /\/v2\/executions\?limit=/.test(r.url())) listReads.push(r.url());
    });
    await page.getByLabel('State').selectOption('');
    await page.getByLabel('Workflow').fill('');
    await expectText('executions-stream', 'live');
    await api('POST', '/v2/workflows', LIVE_WF, 'text/plain');
    const live = String((await api('POST', '/v2/executions', { workflow_name: 'console_live' }))['id']);
    await page.getByTestId(`execution-row-${live}`).getByText('RUNNING').waitFor();
    const readsBefore = listReads.length;
    const liveTask = ((await api('GET', `/v2/executions/${live}/tasks`))['tasks'] as { id: string }[])[0];
    const liveAction = (
      (await api('GET', `/v2/tasks/${liveTask?.id}/action_executions`))['action_executions'] as {
        id: string;
      }[]
    )[0];
    await api('PUT', `/v2/action_executions/${liveAction?.id}`, { state: 'SUCCESS', output: '{}' });
    await page.getByTestId(`execution-row-${live}`).getByText('SUCCESS').waitFor();
    expect(listReads.length).toBe(readsBefore);
    expect(await page.evaluate(() => (globalThis as unknown as { consoleMark?: string }).consoleMark)).toBe(
      'same page',
    );

    // Block storage: a volume created on the Cinder API shows up with its status.
    // (Cinder's project segment is hex; noauth's token names user and project.)
    const project = '0123456789abcdef0123456789abcdef';
    const vol = await fetch(`${volumeBase}/v3/${project}/volumes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-token': `console:${project}` },
      body: JSON.stringify({ volume: { size: 1, name: 'console-vol' } }),
    });
    expect(`${vol.status} ${await vol.text()}`).toMatch(/^202 /);
    await page.getByRole('link', { name: 'Block storage', exact: true }).click();
    await page
      .getByRole('table', { name: 'volumes' })
      .getByRole('row', { name: /console-vol/ })
      .getByText('available')
      .waitFor();
    await shot('block-storage');
  });
});
