import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_FIRING, startCronScheduler } from '@osc/cron-scheduler';
import type { RunningApp } from '@osc/platform';
import { hasPythonModule, runClient } from '@osc/testing';
import { e2eModes } from './support/api-server';
import { type EngineStack, startEngineStack, waitForExecution } from './support/engine-stack';

const hasClient = hasPythonModule('mistralclient');

const MODULE = `
export class Doubler {
  constructor(input) { this.x = input.x; }
  run(context) { return { doubled: this.x * 2, task: context.execution.task_name }; }
}
export class Fails {
  run() { throw new Error('no luck'); }
}
`;
const MODULE_V2 = `
export class Doubler {
  constructor(input) { this.x = input.x; }
  async run() { return { doubled: this.x * 2, version: 2 }; }
}
`;
const BROKEN = 'export class A {\n  run(c) {\n    return 1 +;\n  }\n}\n';

const WF = `---
version: '2.0'
dyn_wf:
  input: [x]
  output:
    answer: <% $.answer %>
  tasks:
    call:
      action: doubler x=<% $.x %>
      publish:
        answer: <% task().result %>
failing_wf:
  tasks:
    call:
      action: failer
`;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/**
 * The real `mistral` CLI (Debian python3-mistralclient, no auth) manages code sources and dynamic
 * actions, a workflow task runs a dynamic action in its namespace, and `service-list` shows every
 * running workflow process.
 */
describe.each(e2eModes())('mistral CLI code sources, dynamic actions and services (%s)', (mode) => {
  let stack: EngineStack;
  let cron: RunningApp;
  let dir: string;

  beforeAll(async () => {
    stack = await startEngineStack(mode);
    cron = await startCronScheduler(
      { health: { port: 0, host: '127.0.0.1' }, logLevel: 'silent', firing: DEFAULT_FIRING },
      stack.testRuntime.runtime,
      { http: false },
    );
    dir = mkdtempSync(path.join(tmpdir(), 'cli-dyn-'));
  }, 120_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await cron?.close();
    await stack?.close();
  }, 60_000);

  const mistral = (...args: string[]) =>
    runClient('mistral', ['--os-mistral-url', `${stack.baseUrl}/v2`, ...args]);
  const json = async (...args: string[]) => {
    const run = await mistral(...args, '-f', 'json');
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(run.stdout);
  };
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it('manages code sources and dynamic actions, and a workflow runs one in its namespace', async () => {
    expect(hasClient).toBe(true);

    const created = await json('code-source-create', 'mymod', file('mymod.js', MODULE), '--namespace', 'ns1');
    expect(created).toEqual({
      ID: expect.stringMatching(/^[0-9a-f-]{36}$/),
      Name: 'mymod',
      Namespace: 'ns1',
      'Project ID': '<default-project>',
      Scope: 'private',
      'Created at': expect.stringMatching(TIMESTAMP),
      'Updated at': null,
    });
    expect(await json('code-source-get', 'mymod', '--namespace', 'ns1')).toEqual(created);
    expect(await json('code-source-get', created.ID)).toEqual(created);
    expect(await json('code-source-list')).toEqual([created]);
    const content = await mistral('code-source-get-content', 'mymod', '--namespace', 'ns1');
    expect(content.stdout).toBe(MODULE);

    const broken = await mistral('code-source-create', 'broken', file('broken.js', BROKEN));
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toContain(
      "Invalid code source broken: SyntaxError: unexpected token in expression: ';' (line 3, column 15)",
    );

    const doubler = await json('dynamic-action-create', 'doubler', 'Doubler', 'mymod', '--namespace', 'ns1');
    expect(doubler).toEqual({
      ID: expect.stringMatching(/^[0-9a-f-]{36}$/),
      Name: 'doubler',
      Class: 'Doubler',
      'Code source ID': created.ID,
      'Code source name': 'mymod',
      'Project ID': '<default-project>',
      Scope: 'private',
      'Created at': expect.stringMatching(TIMESTAMP),
      'Updated at': null,
    });
    // By id: the client sends code_source_id.
    const failer = await json('dynamic-action-create', 'failer', 'Doubler', created.ID, '--namespace', 'ns1');
    expect(failer['Code source name']).toBe('mymod');
    expect(await json('dynamic-action-get', 'doubler', '--namespace', 'ns1')).toEqual(doubler);
    // the list is in created_at order, stored in whole seconds as Mistral does; two rows of the same
    // second follow their (random) ids, as in Mistral — so the names are compared as a set
    expect(
      (await json('dynamic-action-list', '--namespace', 'ns1')).map((a: { Name: string }) => a.Name).sort(),
    ).toEqual(['doubler', 'failer']);
    const updated = await json(
      'dynamic-action-update',
      'failer',
      '--class-name',
      'Fails',
      '--namespace',
      'ns1',
    );
    expect(updated).toMatchObject({ Name: 'failer', Class: 'Fails', 'Code source ID': created.ID });
    expect(updated['Updated at']).toMatch(TIMESTAMP);

    const noSource = await mistral('dynamic-action-create', 'x', 'Doubler', 'nope', '--namespace', 'ns1');
    expect(noSource.code).not.toBe(0);
    expect(noSource.stderr).toContain('Code Source not found [name=nope,namespace=ns1]');

    // A workflow in the same namespace names the dynamic action like any action.
    expect((await mistral('workflow-create', file('wf.yaml', WF), '--namespace', 'ns1')).code).toBe(0);
    const execution = await json('execution-create', 'dyn_wf', '{"x": 21}', '--namespace', 'ns1');
    const done = await waitForExecution(stack.client, execution.ID);
    expect(done['state']).toBe('SUCCESS');
    expect(JSON.parse(done['output'])).toEqual({ answer: { doubled: 42, task: 'call' } });

    const failing = await json('execution-create', 'failing_wf', '--namespace', 'ns1');
    const failed = await waitForExecution(stack.client, failing.ID);
    expect(failed['state']).toBe('ERROR');
    const tasks = await stack.client.get(`/v2/executions/${failing.ID}/tasks`);
    expect(tasks.body.tasks[0].state).toBe('ERROR');
    const task = await stack.client.get(`/v2/tasks/${tasks.body.tasks[0].id}`);
    expect(JSON.parse(task.body.result)).toMatch(
      /^The action raised an exception \[action=<mistral\.actions\.dynamic_action\.DynamicAction object at 0x7f[0-9a-f]{10}>, action_ex_id=[0-9a-f-]{36}, msg='Error: no luck'\]$/,
    );

    // An update replaces the module; the next run uses it.
    const v2 = await json('code-source-update', 'mymod', file('mymod2.js', MODULE_V2), '--namespace', 'ns1');
    expect(v2).toMatchObject({ ID: created.ID, Name: 'mymod', Namespace: 'ns1', Scope: 'private' });
    expect(v2['Updated at']).toMatch(TIMESTAMP);
    expect((await stack.client.get(`/v2/code_sources/${created.ID}`)).body.version).toBe(2);
    const again = await json('execution-create', 'dyn_wf', '{"x": 5}', '--namespace', 'ns1');
    expect(JSON.parse((await waitForExecution(stack.client, again.ID))['output'])).toEqual({
      answer: { doubled: 10, version: 2 },
    });

    const deletedAction = await mistral('dynamic-action-delete', 'failer', '--namespace', 'ns1');
    expect(deletedAction.code).toBe(0);
    expect(deletedAction.stdout).toContain('Request to delete dynamic action(s) failer has been accepted.');
    // Deleting the code source deletes the actions built on it (Mistral's cascade).
    const deletedSource = await mistral('code-source-delete', 'mymod', '--namespace', 'ns1');
    expect(deletedSource.code).toBe(0);
    expect(deletedSource.stdout).toContain("Request to delete code source 'mymod' has been accepted.");
    const gone = await mistral('dynamic-action-get', 'doubler', '--namespace', 'ns1');
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('Dynamic Action not found [name=doubler,namespace=ns1]');
    const goneSource = await mistral('code-source-get', 'mymod', '--namespace', 'ns1');
    expect(goneSource.stderr).toContain('Code Source not found [name=mymod,namespace=ns1]');
  });

  it('service-list shows the api, engine, executor, notifier and cron-scheduler instances', async () => {
    const services = await json('service-list');
    const name = `${hostname()}_${process.pid}`;
    expect(services).toEqual([
      { Name: name, Type: 'api_group' },
      { Name: name, Type: 'engine_group' },
      { Name: name, Type: 'executor_group' },
      { Name: name, Type: 'notifier_group' },
      { Name: name, Type: 'cron-scheduler_group' },
    ]);
  });
});
