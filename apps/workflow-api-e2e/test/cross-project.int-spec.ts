import { existsSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_CONSOLE_DIR } from '@osc/workflow-api';
import { Client, type HttpResult, e2eModes } from './support/api-server';
import { type EngineStack, startEngineStack, waitForExecution } from './support/engine-stack';

/**
 * Cross-project safety (issue #15 item 4): every registered route of the Mistral API is walked with
 * project B's credentials against project A's resources. B must get what Mistral answers another
 * project (404, or 403 for public definitions it does not own, or an empty list) and never A's data;
 * A's resources are the same afterwards. The walk is keyed by the app's route table, so a new route
 * without an entry here fails the suite.
 */
const SECRET = 'a-secret-7f3e9c';
const A = { 'x-project-id': 'proj-a', 'x-user-id': 'alice', 'x-roles': 'member' };
const A_ADMIN = { 'x-project-id': 'proj-a', 'x-user-id': 'alice', 'x-roles': 'member,admin' };
const B = { 'x-project-id': 'proj-b', 'x-user-id': 'bob', 'x-roles': 'member' };
const ADMIN = { 'x-project-id': 'proj-admin', 'x-user-id': 'root', 'x-roles': 'admin' };

const SUB_WF = `version: '2.0'
iso_sub:
  description: ${SECRET}
  input: [secret]
  output:
    echoed: <% $.echoed %>
  tasks:
    echo:
      action: std.echo output=<% $.secret %>
      publish:
        echoed: <% task().result %>
`;
const PARENT_WF = `version: '2.0'
iso_parent:
  input: [secret]
  tasks:
    call:
      workflow: iso_sub secret=<% $.secret %>
`;
const PUBLIC_WF = `version: '2.0'
iso_pub_wf:
  description: public ${SECRET}
  tasks:
    t1:
      action: std.noop
`;
const workbook = (name: string) => `version: '2.0'
name: ${name}
description: ${SECRET}
workflows:
  wb_wf:
    tasks:
      t1:
        action: std.noop
`;
const action = (name: string) => `version: '2.0'
${name}:
  description: ${SECRET}
  base: std.echo
  base-input:
    output: ${SECRET}
`;

const wsme = (faultstring: string) => ({ faultcode: 'Client', faultstring, debuginfo: null });
const FORBIDDEN_POLICY = wsme('Operation forbidden (insufficient permissions)');

interface Ids {
  subWf: string;
  parentWf: string;
  pubWf: string;
  wb: string;
  pubWb: string;
  action: string;
  pubAction: string;
  execution: string;
  subExecution: string;
  parentTask: string;
  subTask: string;
  actionExecution: string;
  adhocActionExecution: string;
  cron: string;
  cronId: string;
  eventTrigger: string;
  environment: string;
  codeSource: string;
  dynamicAction: string;
}

/** One request B makes and what it must get. `body` (exact) or `list` (the key whose array must be empty of A's rows). */
interface Probe {
  method: string;
  path: string;
  send?: { text: string; type: 'json' | 'yaml' };
  status: number;
  body?: unknown;
  /** The array under this key holds none of A's private rows (checked by id). */
  list?: string;
  /** The answer may show A's public definitions (which carry the secret text). */
  shows?: 'public';
}

/** B's own documents with A's names: the same text without A's secret. */
const mine = (text: string) => text.replaceAll(SECRET, 'b-text');

const json = (v: unknown) => ({ text: JSON.stringify(v), type: 'json' as const });
const consoleBuilt = (): boolean => existsSync(path.join(DEFAULT_CONSOLE_DIR, 'index.html'));
const yaml = (text: string) => ({ text, type: 'yaml' as const });

describe.each(e2eModes())('cross-project safety of the workflow API (%s)', (mode) => {
  let stack: EngineStack;
  let alice: Client;
  let aliceAdmin: Client;
  let bob: Client;
  let root: Client;
  const ids = {} as Ids;
  let privateIds: string[] = [];

  const call = (c: Client, method: string, path: string, send?: Probe['send']): Promise<HttpResult> =>
    c.send(method, path, send?.text, send?.type === 'json' ? 'application/json' : 'text/plain');
  const ok = async (c: Client, method: string, path: string, send?: Probe['send']): Promise<any> => {
    const res = await call(c, method, path, send);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  /** Everything A owns, as A sees it: the walk must leave it as it was. */
  const snapshotOfA = async (): Promise<unknown> => {
    const paths = [
      `/v2/workflows/${ids.subWf}`,
      `/v2/workflows/${ids.parentWf}`,
      `/v2/workflows/${ids.pubWf}`,
      '/v2/workbooks/iso_wb',
      '/v2/workbooks/iso_pub_wb',
      '/v2/actions/iso_action',
      '/v2/actions/iso_pub_action',
      `/v2/executions/${ids.execution}`,
      `/v2/executions/${ids.subExecution}`,
      `/v2/tasks/${ids.parentTask}`,
      `/v2/tasks/${ids.subTask}`,
      `/v2/action_executions/${ids.actionExecution}`,
      `/v2/action_executions/${ids.adhocActionExecution}`,
      '/v2/cron_triggers/iso_cron',
      `/v2/event_triggers/${ids.eventTrigger}`,
      '/v2/environments/iso_env',
      '/v2/environments',
      `/v2/code_sources/${ids.codeSource}`,
      `/v2/dynamic_actions/${ids.dynamicAction}`,
      `/v2/workflows/${ids.subWf}/members`,
      '/v2/workflows?sort_keys=name',
      '/v2/executions?include_output=true',
      '/v2/tasks',
      '/v2/action_executions?include_output=true',
    ];
    const out: Record<string, unknown> = {};
    for (const p of paths) out[p] = await ok(alice, 'GET', p);
    return out;
  };

  beforeAll(async () => {
    stack = await startEngineStack(mode, { authMode: 'headers', allowActionExecutionDeletion: true });
    alice = stack.client.as(A);
    aliceAdmin = stack.client.as(A_ADMIN);
    bob = stack.client.as(B);
    root = stack.client.as(ADMIN);

    ids.subWf = (await ok(alice, 'POST', '/v2/workflows', yaml(SUB_WF))).workflows[0].id;
    ids.parentWf = (await ok(alice, 'POST', '/v2/workflows', yaml(PARENT_WF))).workflows[0].id;
    ids.pubWf = (await ok(aliceAdmin, 'POST', '/v2/workflows?scope=public', yaml(PUBLIC_WF))).workflows[0].id;
    ids.wb = (await ok(alice, 'POST', '/v2/workbooks', yaml(workbook('iso_wb')))).id;
    ids.pubWb = (await ok(aliceAdmin, 'POST', '/v2/workbooks?scope=public', yaml(workbook('iso_pub_wb')))).id;
    ids.action = (await ok(alice, 'POST', '/v2/actions', yaml(action('iso_action')))).actions[0].id;
    await ok(alice, 'POST', '/v2/actions', yaml(action('iso_only_a')));
    ids.pubAction = (
      await ok(aliceAdmin, 'POST', '/v2/actions?scope=public', yaml(action('iso_pub_action')))
    ).actions[0].id;

    ids.execution = (
      await ok(
        alice,
        'POST',
        '/v2/executions',
        json({ workflow_id: ids.parentWf, input: { secret: SECRET }, description: SECRET }),
      )
    ).id;
    await waitForExecution(alice, ids.execution, ['SUCCESS']);
    const parentTasks = (await ok(alice, 'GET', `/v2/executions/${ids.execution}/tasks`)).tasks;
    ids.parentTask = parentTasks[0].id;
    ids.subExecution = (
      await ok(alice, 'GET', `/v2/tasks/${ids.parentTask}/workflow_executions`)
    ).executions[0].id;
    ids.subTask = (await ok(alice, 'GET', `/v2/executions/${ids.subExecution}/tasks`)).tasks[0].id;
    ids.actionExecution = (
      await ok(alice, 'GET', `/v2/tasks/${ids.subTask}/action_executions`)
    ).action_executions[0].id;
    ids.adhocActionExecution = (
      await ok(
        alice,
        'POST',
        '/v2/action_executions',
        json({
          name: 'std.echo',
          input: { output: SECRET },
          description: SECRET,
          params: { save_result: true, run_sync: true },
        }),
      )
    ).id;
    ids.cron = 'iso_cron';
    ids.cronId = (
      await ok(
        alice,
        'POST',
        '/v2/cron_triggers',
        json({
          name: 'iso_cron',
          workflow_id: ids.subWf,
          workflow_input: { secret: SECRET },
          pattern: '0 0 1 1 *',
        }),
      )
    ).id;
    ids.eventTrigger = (
      await ok(
        alice,
        'POST',
        '/v2/event_triggers',
        json({
          name: 'iso_event',
          workflow_id: ids.subWf,
          workflow_input: { secret: SECRET },
          exchange: 'x',
          topic: 't',
          event: 'e',
        }),
      )
    ).id;
    await ok(alice, 'POST', `/v2/workflows/${ids.subWf}/members`, json({ member_id: 'proj-c' }));
    ids.environment = (
      await ok(alice, 'POST', '/v2/environments', json({ name: 'iso_env', variables: { secret: SECRET } }))
    ).id;
    ids.codeSource = (
      await ok(alice, 'POST', '/v2/code_sources?name=iso_code', {
        text: `export class Iso { run() { return '${SECRET}'; } }\n`,
        type: 'yaml',
      })
    ).id;
    ids.dynamicAction = (
      await ok(
        alice,
        'POST',
        '/v2/dynamic_actions',
        json({ name: 'iso_dyn', class_name: 'Iso', code_source_id: ids.codeSource }),
      )
    ).id;
    privateIds = [
      ids.subWf,
      ids.parentWf,
      ids.wb,
      ids.action,
      ids.execution,
      ids.subExecution,
      ids.parentTask,
      ids.subTask,
      ids.actionExecution,
      ids.adhocActionExecution,
      ids.cronId,
      ids.eventTrigger,
      ids.environment,
      ids.codeSource,
      ids.dynamicAction,
    ];
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  /**
   * The walk, one entry per registered route (`METHOD /url/:param` as Fastify has it). Each entry
   * lists B's requests with what Mistral answers a caller of another project.
   */
  const walk = (): Record<string, Probe[]> => {
    const notFound = {
      workflow: (id: string) => wsme(`Workflow not found [workflow_identifier=${id}, namespace=]`),
      execution: (id: string) => wsme(`WorkflowExecution not found [id=${id}]`),
      task: (id: string) => wsme(`TaskExecution not found [id=${id}]`),
      actionExecution: (id: string) => wsme(`ActionExecution not found [id=${id}]`),
      cron: (id: string) => wsme(`Cron trigger not found [identifier=${id}]`),
      event: (id: string) => wsme(`Event trigger not found [id=${id}].`),
    };
    const otherProject = (model: string, id: string) =>
      `Can not access ${model} resource of other projects, ID: ${id}`;
    const ex = ids.execution;
    return {
      'GET /': [{ method: 'GET', path: '/', status: 200 }],
      'GET /v2': [{ method: 'GET', path: '/v2', status: 302 }],
      'GET /healthz': [{ method: 'GET', path: '/healthz', status: 200 }],
      'GET /readyz': [{ method: 'GET', path: '/readyz', status: 200 }],
      'GET /metrics': [{ method: 'GET', path: '/metrics', status: 200 }],

      'GET /v2/workflows': [
        { method: 'GET', path: '/v2/workflows', status: 200, list: 'workflows', shows: 'public' },
        { method: 'GET', path: '/v2/workflows?name=iso_sub', status: 200, body: { workflows: [] } },
        {
          method: 'GET',
          path: '/v2/workflows?project_id=proj-a',
          status: 200,
          list: 'workflows',
          shows: 'public',
        },
        { method: 'GET', path: '/v2/workflows?scope=private', status: 200, list: 'workflows' },
        {
          method: 'GET',
          path: `/v2/workflows?marker=${ids.subWf}`,
          status: 404,
          body: wsme(`Workflow not found [workflow_id=${ids.subWf}]`),
        },
        { method: 'GET', path: '/v2/workflows?all_projects=true', status: 403, body: FORBIDDEN_POLICY },
      ],
      'POST /v2/workflows': [
        { method: 'POST', path: '/v2/workflows?namespace=b', send: yaml(mine(SUB_WF)), status: 201 },
      ],
      'PUT /v2/workflows': [
        {
          method: 'PUT',
          path: '/v2/workflows',
          send: yaml(mine(PARENT_WF)),
          status: 404,
          body: { faultstring: `Workflow not found [workflow_identifier=iso_parent, namespace=]` },
        },
        {
          method: 'PUT',
          path: '/v2/workflows',
          send: yaml(mine(PUBLIC_WF)),
          status: 403,
          body: { faultstring: otherProject('WorkflowDefinition', ids.pubWf) },
        },
      ],
      'POST /v2/workflows/validate': [
        {
          method: 'POST',
          path: '/v2/workflows/validate',
          send: yaml(mine(SUB_WF)),
          status: 200,
          body: { valid: true },
        },
      ],
      'GET /v2/workflows/:identifier': [
        {
          method: 'GET',
          path: `/v2/workflows/${ids.subWf}`,
          status: 404,
          body: notFound.workflow(ids.subWf),
        },
        {
          method: 'GET',
          path: '/v2/workflows/iso_parent',
          status: 404,
          body: notFound.workflow('iso_parent'),
        },
        { method: 'GET', path: `/v2/workflows/${ids.pubWf}`, status: 200, shows: 'public' },
      ],
      'PUT /v2/workflows/:identifier': [
        {
          method: 'PUT',
          path: `/v2/workflows/${ids.parentWf}`,
          send: yaml(mine(PARENT_WF)),
          status: 404,
          body: { faultstring: `Workflow not found [workflow_identifier=${ids.parentWf}, namespace=]` },
        },
        {
          method: 'PUT',
          path: `/v2/workflows/${ids.pubWf}`,
          send: yaml(mine(PUBLIC_WF)),
          status: 403,
          body: { faultstring: otherProject('WorkflowDefinition', ids.pubWf) },
        },
      ],
      'DELETE /v2/workflows/:identifier': [
        {
          method: 'DELETE',
          path: `/v2/workflows/${ids.subWf}`,
          status: 404,
          body: notFound.workflow(ids.subWf),
        },
        {
          method: 'DELETE',
          path: '/v2/workflows/iso_pub_wf',
          status: 403,
          body: wsme(otherProject('WorkflowDefinition', ids.pubWf)),
        },
      ],

      'GET /v2/workflows/:workflowId/members': [
        { method: 'GET', path: `/v2/workflows/${ids.subWf}/members`, status: 200, body: { members: [] } },
      ],
      'POST /v2/workflows/:workflowId/members': [
        {
          method: 'POST',
          path: `/v2/workflows/${ids.subWf}/members`,
          send: json({ member_id: 'proj-b' }),
          status: 404,
          body: wsme(`Workflow not found [workflow_identifier=${ids.subWf}, namespace=]`),
        },
      ],
      'GET /v2/workflows/:workflowId/members/:memberId': [
        {
          method: 'GET',
          path: `/v2/workflows/${ids.subWf}/members/proj-c`,
          status: 404,
          body: wsme(`Resource member not found [resource_id=${ids.subWf}, member_id=proj-c]`),
        },
      ],
      'PUT /v2/workflows/:workflowId/members/:memberId': [
        {
          method: 'PUT',
          path: `/v2/workflows/${ids.subWf}/members/proj-c`,
          send: json({ status: 'accepted' }),
          status: 404,
          body: wsme(`Resource member not found [resource_id=${ids.subWf}, member_id=proj-c]`),
        },
        {
          method: 'PUT',
          path: `/v2/workflows/${ids.subWf}/members/proj-b`,
          send: json({ status: 'accepted' }),
          status: 404,
          body: wsme(`Resource member not found [resource_id=${ids.subWf}, member_id=proj-b]`),
        },
      ],
      'DELETE /v2/workflows/:workflowId/members/:memberId': [
        {
          method: 'DELETE',
          path: `/v2/workflows/${ids.subWf}/members/proj-c`,
          status: 404,
          body: wsme(`Resource member not found [resource_id=${ids.subWf}, member_id=proj-c]`),
        },
      ],

      'GET /v2/workbooks': [
        { method: 'GET', path: '/v2/workbooks', status: 200, list: 'workbooks', shows: 'public' },
        { method: 'GET', path: '/v2/workbooks?name=iso_wb', status: 200, body: { workbooks: [] } },
        // Mistral's workbook, action, task and action-execution lists know no all_projects.
        {
          method: 'GET',
          path: '/v2/workbooks?all_projects=true',
          status: 400,
          body: wsme('Unknown argument: "all_projects"'),
        },
      ],
      'POST /v2/workbooks': [
        { method: 'POST', path: '/v2/workbooks', send: yaml(mine(workbook('iso_wb'))), status: 201 },
      ],
      'PUT /v2/workbooks': [
        {
          method: 'PUT',
          path: '/v2/workbooks',
          send: yaml(mine(workbook('iso_pub_wb'))),
          status: 403,
          body: { faultstring: otherProject('Workbook', ids.pubWb) },
        },
      ],
      'POST /v2/workbooks/validate': [
        {
          method: 'POST',
          path: '/v2/workbooks/validate',
          send: yaml(mine(workbook('iso_wb'))),
          status: 200,
          body: { valid: true },
        },
      ],
      'GET /v2/workbooks/:name': [
        { method: 'GET', path: '/v2/workbooks/iso_pub_wb', status: 200, shows: 'public' },
      ],
      'DELETE /v2/workbooks/:name': [
        {
          method: 'DELETE',
          path: '/v2/workbooks/iso_pub_wb',
          status: 403,
          body: wsme(otherProject('Workbook', ids.pubWb)),
        },
      ],

      'GET /v2/actions': [
        { method: 'GET', path: '/v2/actions', status: 200, list: 'actions', shows: 'public' },
        { method: 'GET', path: '/v2/actions?name=iso_action', status: 200, body: { actions: [] } },
        {
          method: 'GET',
          path: '/v2/actions?all_projects=true',
          status: 400,
          body: wsme('Unknown argument: "all_projects"'),
        },
      ],
      'POST /v2/actions': [
        { method: 'POST', path: '/v2/actions', send: yaml(mine(action('iso_action'))), status: 201 },
      ],
      'PUT /v2/actions': [
        {
          method: 'PUT',
          path: '/v2/actions',
          send: yaml(mine(action('iso_pub_action'))),
          status: 403,
          body: { faultstring: otherProject('ActionDefinition', ids.pubAction) },
        },
      ],
      'POST /v2/actions/validate': [
        {
          method: 'POST',
          path: '/v2/actions/validate',
          send: yaml(mine(action('iso_action'))),
          status: 200,
          body: { valid: true },
        },
      ],
      'GET /v2/actions/:identifier': [
        { method: 'GET', path: `/v2/actions/${ids.pubAction}`, status: 200, shows: 'public' },
      ],
      'PUT /v2/actions/:identifier': [
        {
          method: 'PUT',
          path: `/v2/actions/${ids.pubAction}`,
          send: yaml(mine(action('iso_pub_action'))),
          status: 403,
          body: { faultstring: otherProject('ActionDefinition', ids.pubAction) },
        },
      ],
      'DELETE /v2/actions/:identifier': [
        {
          method: 'DELETE',
          path: '/v2/actions/iso_pub_action',
          status: 403,
          body: wsme(otherProject('ActionDefinition', ids.pubAction)),
        },
      ],

      'GET /v2/executions': [
        { method: 'GET', path: '/v2/executions?include_output=true', status: 200, body: { executions: [] } },
        {
          method: 'GET',
          path: `/v2/executions?workflow_id=${ids.parentWf}`,
          status: 200,
          body: { executions: [] },
        },
        {
          method: 'GET',
          path: '/v2/executions?workflow_name=iso_parent',
          status: 200,
          body: { executions: [] },
        },
        {
          method: 'GET',
          path: `/v2/executions?root_execution_id=${ex}`,
          status: 200,
          body: { executions: [] },
        },
        { method: 'GET', path: `/v2/executions?marker=${ex}`, status: 404, body: notFound.execution(ex) },
        {
          method: 'GET',
          path: `/v2/executions?marker=${ex}&sort_keys=description`,
          status: 404,
          body: notFound.execution(ex),
        },
        { method: 'GET', path: '/v2/executions?all_projects=true', status: 403, body: FORBIDDEN_POLICY },
        { method: 'GET', path: '/v2/executions?project_id=proj-a', status: 403, body: FORBIDDEN_POLICY },
      ],
      'POST /v2/executions': [
        // Mistral: another project's execution id is not visible to the idempotency lookup, so the
        // engine's insert meets the duplicate and reads it back through the scoped query: 404.
        {
          method: 'POST',
          path: '/v2/executions',
          send: json({ id: ex, workflow_id: ids.pubWf }),
          status: 404,
          body: notFound.execution(ex),
        },
        {
          method: 'POST',
          path: '/v2/executions',
          send: json({ id: ex, workflow_name: 'iso_parent' }),
          status: 404,
          body: notFound.workflow('iso_parent'),
        },
        {
          method: 'POST',
          path: '/v2/executions',
          send: json({ workflow_id: ids.pubWf, source_execution_id: ex }),
          status: 404,
          body: notFound.execution(ex),
        },
      ],
      'GET /v2/executions/:id': [
        { method: 'GET', path: `/v2/executions/${ex}`, status: 404, body: notFound.execution(ex) },
      ],
      'PUT /v2/executions/:id': [
        {
          method: 'PUT',
          path: `/v2/executions/${ex}`,
          send: json({ description: 'mine now' }),
          status: 404,
          body: notFound.execution(ex),
        },
        {
          method: 'PUT',
          path: `/v2/executions/${ids.subExecution}`,
          send: json({ state: 'ERROR' }),
          status: 404,
          body: notFound.execution(ids.subExecution),
        },
      ],
      'DELETE /v2/executions/:id': [
        {
          method: 'DELETE',
          path: `/v2/executions/${ex}?force=true`,
          status: 404,
          body: notFound.execution(ex),
        },
      ],
      'GET /v2/executions/:id/tasks': [
        { method: 'GET', path: `/v2/executions/${ex}/tasks`, status: 404, body: notFound.execution(ex) },
      ],
      'GET /v2/executions/:id/executions': [
        {
          method: 'GET',
          path: `/v2/executions/${ex}/executions?include_output=true`,
          status: 404,
          body: notFound.execution(ex),
        },
      ],
      'GET /v2/executions/:id/report': [
        { method: 'GET', path: `/v2/executions/${ex}/report`, status: 404, body: notFound.execution(ex) },
      ],

      'GET /v2/tasks': [
        { method: 'GET', path: '/v2/tasks', status: 200, body: { tasks: [] } },
        { method: 'GET', path: `/v2/tasks?workflow_execution_id=${ex}`, status: 200, body: { tasks: [] } },
        {
          method: 'GET',
          path: `/v2/tasks?marker=${ids.subTask}`,
          status: 404,
          body: notFound.task(ids.subTask),
        },
        {
          method: 'GET',
          path: '/v2/tasks?all_projects=true',
          status: 400,
          body: wsme('Unknown argument: "all_projects"'),
        },
      ],
      'GET /v2/tasks/:id': [
        { method: 'GET', path: `/v2/tasks/${ids.subTask}`, status: 404, body: notFound.task(ids.subTask) },
      ],
      'PUT /v2/tasks/:id': [
        {
          method: 'PUT',
          path: `/v2/tasks/${ids.subTask}`,
          send: json({ state: 'RUNNING', reset: true }),
          status: 404,
          body: notFound.task(ids.subTask),
        },
      ],
      // Mistral filters these lists by task id without looking the task up: another project's task lists nothing.
      'GET /v2/tasks/:id/action_executions': [
        {
          method: 'GET',
          path: `/v2/tasks/${ids.subTask}/action_executions?include_output=true`,
          status: 200,
          body: { action_executions: [] },
        },
      ],
      'GET /v2/tasks/:id/workflow_executions': [
        {
          method: 'GET',
          path: `/v2/tasks/${ids.parentTask}/workflow_executions`,
          status: 200,
          body: { executions: [] },
        },
      ],
      'GET /v2/tasks/:id/executions': [
        {
          method: 'GET',
          path: `/v2/tasks/${ids.parentTask}/executions?include_output=true`,
          status: 404,
          body: notFound.task(ids.parentTask),
        },
      ],

      'GET /v2/action_executions': [
        {
          method: 'GET',
          path: '/v2/action_executions?include_output=true',
          status: 200,
          body: { action_executions: [] },
        },
        {
          method: 'GET',
          path: `/v2/action_executions?task_execution_id=${ids.subTask}`,
          status: 200,
          body: { action_executions: [] },
        },
        {
          method: 'GET',
          path: `/v2/action_executions?marker=${ids.adhocActionExecution}`,
          status: 404,
          body: notFound.actionExecution(ids.adhocActionExecution),
        },
        {
          method: 'GET',
          path: '/v2/action_executions?all_projects=true',
          status: 400,
          body: wsme('Unknown argument: "all_projects"'),
        },
      ],
      // The same answer as for an action that does not exist (Mistral's InvalidActionException).
      'POST /v2/action_executions': [
        {
          method: 'POST',
          path: '/v2/action_executions',
          send: json({ name: 'iso_only_a' }),
          status: 400,
          body: wsme('Failed to find action [action_name=iso_only_a]'),
        },
      ],
      'GET /v2/action_executions/:id': [
        {
          method: 'GET',
          path: `/v2/action_executions/${ids.actionExecution}`,
          status: 404,
          body: notFound.actionExecution(ids.actionExecution),
        },
        {
          method: 'GET',
          path: `/v2/action_executions/${ids.adhocActionExecution}`,
          status: 404,
          body: notFound.actionExecution(ids.adhocActionExecution),
        },
      ],
      'PUT /v2/action_executions/:id': [
        {
          method: 'PUT',
          path: `/v2/action_executions/${ids.adhocActionExecution}`,
          send: json({ state: 'ERROR', output: 'x' }),
          status: 404,
          body: notFound.actionExecution(ids.adhocActionExecution),
        },
      ],
      'DELETE /v2/action_executions/:id': [
        {
          method: 'DELETE',
          path: `/v2/action_executions/${ids.adhocActionExecution}`,
          status: 404,
          body: notFound.actionExecution(ids.adhocActionExecution),
        },
      ],

      'GET /v2/cron_triggers': [
        { method: 'GET', path: '/v2/cron_triggers', status: 200, body: { cron_triggers: [] } },
        { method: 'GET', path: '/v2/cron_triggers?name=iso_cron', status: 200, body: { cron_triggers: [] } },
        {
          method: 'GET',
          path: '/v2/cron_triggers?project_id=proj-a',
          status: 200,
          body: { cron_triggers: [] },
        },
        {
          method: 'GET',
          path: `/v2/cron_triggers?marker=${ids.cronId}`,
          status: 404,
          body: wsme(`CronTrigger not found [id=${ids.cronId}]`),
        },
        { method: 'GET', path: '/v2/cron_triggers?all_projects=true', status: 403, body: FORBIDDEN_POLICY },
      ],
      'POST /v2/cron_triggers': [
        {
          method: 'POST',
          path: '/v2/cron_triggers',
          send: json({ name: 'iso_cron', workflow_id: ids.subWf, pattern: '0 0 1 1 *' }),
          status: 404,
          body: wsme(`Workflow not found [workflow_identifier=${ids.subWf}, namespace=]`),
        },
      ],
      'GET /v2/cron_triggers/:identifier': [
        { method: 'GET', path: '/v2/cron_triggers/iso_cron', status: 404, body: notFound.cron('iso_cron') },
        {
          method: 'GET',
          path: `/v2/cron_triggers/${ids.cronId}`,
          status: 404,
          body: notFound.cron(ids.cronId),
        },
      ],
      'DELETE /v2/cron_triggers/:identifier': [
        {
          method: 'DELETE',
          path: `/v2/cron_triggers/${ids.cronId}`,
          status: 404,
          body: notFound.cron(ids.cronId),
        },
      ],

      // environments are found by name within the caller's project (and public ones): B has none named iso_env
      'GET /v2/environments': [
        { method: 'GET', path: '/v2/environments', status: 200, body: { environments: [] } },
        { method: 'GET', path: '/v2/environments?name=iso_env', status: 200, body: { environments: [] } },
        { method: 'GET', path: `/v2/environments?marker=${ids.environment}`, status: 404 },
      ],
      'GET /v2/environments/:name': [
        {
          method: 'GET',
          path: '/v2/environments/iso_env',
          status: 404,
          body: wsme('Environment not found [name=iso_env]'),
        },
        {
          method: 'GET',
          path: `/v2/environments/${ids.environment}`,
          status: 404,
          body: wsme(`Environment not found [name=${ids.environment}]`),
        },
      ],
      'PUT /v2/environments': [
        {
          method: 'PUT',
          path: '/v2/environments',
          send: json({ name: 'iso_env', variables: { secret: 'b' } }),
          status: 404,
          body: wsme('Environment not found [name=iso_env]'),
        },
      ],
      'DELETE /v2/environments/:name': [
        {
          method: 'DELETE',
          path: '/v2/environments/iso_env',
          status: 404,
          body: wsme('Environment not found [name=iso_env]'),
        },
      ],
      // (names are per project: B may have its own iso_env; the walk's order is not this table's, so B's
      // own gets another name here and the lookups above keep meaning "A's is not reachable")
      'POST /v2/environments': [
        {
          method: 'POST',
          path: '/v2/environments',
          send: json({ name: 'iso_env_of_b', variables: { mine: true } }),
          status: 201,
        },
      ],

      // code sources and dynamic actions: private to their project like environments
      'GET /v2/code_sources': [
        { method: 'GET', path: '/v2/code_sources', status: 200, list: 'code_sources' },
        { method: 'GET', path: '/v2/code_sources?all_projects=true', status: 403 },
      ],
      'GET /v2/code_sources/:identifier': [
        { method: 'GET', path: `/v2/code_sources/${ids.codeSource}`, status: 404 },
        { method: 'GET', path: '/v2/code_sources/iso_code', status: 404 },
      ],
      'PUT /v2/code_sources': [
        {
          method: 'PUT',
          path: `/v2/code_sources?identifier=${ids.codeSource}`,
          send: { text: 'export class Iso { run() { return 1; } }\n', type: 'yaml' },
          status: 404,
        },
      ],
      'DELETE /v2/code_sources/:identifier': [
        { method: 'DELETE', path: `/v2/code_sources/${ids.codeSource}`, status: 404 },
      ],
      'POST /v2/code_sources': [
        {
          method: 'POST',
          path: '/v2/code_sources?name=iso_code_of_b',
          send: { text: 'export class B { run() { return 1; } }\n', type: 'yaml' },
          status: 201,
        },
      ],
      'GET /v2/dynamic_actions': [
        { method: 'GET', path: '/v2/dynamic_actions', status: 200, list: 'dynamic_actions' },
        { method: 'GET', path: '/v2/dynamic_actions?all_projects=true', status: 403 },
      ],
      'GET /v2/dynamic_actions/:identifier': [
        { method: 'GET', path: `/v2/dynamic_actions/${ids.dynamicAction}`, status: 404 },
        { method: 'GET', path: '/v2/dynamic_actions/iso_dyn', status: 404 },
      ],
      'PUT /v2/dynamic_actions': [
        {
          method: 'PUT',
          path: '/v2/dynamic_actions',
          send: json({ name: 'iso_dyn', class_name: 'Other' }),
          status: 404,
        },
      ],
      'DELETE /v2/dynamic_actions/:identifier': [
        { method: 'DELETE', path: `/v2/dynamic_actions/${ids.dynamicAction}`, status: 404 },
      ],
      // B cannot build an action on A's private code source
      'POST /v2/dynamic_actions': [
        {
          method: 'POST',
          path: '/v2/dynamic_actions',
          send: json({ name: 'iso_dyn_b', class_name: 'Iso', code_source_id: ids.codeSource }),
          status: 404,
        },
      ],
      // running services are not a project's resource (Mistral lists them to any caller)
      'GET /v2/services': [{ method: 'GET', path: '/v2/services', status: 200 }],
      // the console's static files and settings carry no data; its block-storage pass-through is not configured here
      // (200 once `npm start` or the console's test built it, else 503 saying how to build it)
      'GET /console': [{ method: 'GET', path: '/console', status: consoleBuilt() ? 200 : 503 }],
      'GET /console/*': [
        { method: 'GET', path: '/console/executions/x', status: consoleBuilt() ? 200 : 503 },
      ],
      'GET /console/config.json': [{ method: 'GET', path: '/console/config.json', status: 200 }],
      'GET /console/block-storage/*': [
        { method: 'GET', path: '/console/block-storage/v3/volumes', status: 404 },
      ],

      // the history of another project's execution is as hidden as the execution
      'GET /v2/executions/:id/events': [
        { method: 'GET', path: `/v2/executions/${ex}/events`, status: 404, body: notFound.execution(ex) },
        {
          method: 'GET',
          path: `/v2/executions/${ids.subExecution}/events?marker=0&limit=5`,
          status: 404,
          body: notFound.execution(ids.subExecution),
        },
      ],
      // and so is its data to the expression playground
      'POST /v2/executions/:id/evaluate': [
        {
          method: 'POST',
          path: `/v2/executions/${ex}/evaluate`,
          send: json({ expression: 'env()' }),
          status: 404,
          body: notFound.execution(ex),
        },
        {
          method: 'POST',
          path: `/v2/executions/${ids.subExecution}/evaluate`,
          send: json({ expression: '$', language: 'jinja' }),
          status: 404,
          body: notFound.execution(ids.subExecution),
        },
      ],

      'GET /v2/event_triggers': [
        { method: 'GET', path: '/v2/event_triggers', status: 200, body: { event_triggers: [] } },
        {
          method: 'GET',
          path: `/v2/event_triggers?marker=${ids.eventTrigger}`,
          status: 404,
          body: wsme(`EventTrigger not found [id=${ids.eventTrigger}]`),
        },
        { method: 'GET', path: '/v2/event_triggers?all_projects=true', status: 403, body: FORBIDDEN_POLICY },
      ],
      'POST /v2/event_triggers': [
        {
          method: 'POST',
          path: '/v2/event_triggers',
          send: json({ name: 'iso_event', workflow_id: ids.subWf, exchange: 'x', topic: 't', event: 'e' }),
          status: 404,
          body: wsme(`Workflow not found [workflow_id=${ids.subWf}]`),
        },
      ],
      'GET /v2/event_triggers/:id': [
        {
          method: 'GET',
          path: `/v2/event_triggers/${ids.eventTrigger}`,
          status: 404,
          body: notFound.event(ids.eventTrigger),
        },
      ],
      'PUT /v2/event_triggers/:id': [
        {
          method: 'PUT',
          path: `/v2/event_triggers/${ids.eventTrigger}`,
          send: json({ name: 'mine' }),
          status: 404,
          body: notFound.event(ids.eventTrigger),
        },
      ],
      'DELETE /v2/event_triggers/:id': [
        {
          method: 'DELETE',
          path: `/v2/event_triggers/${ids.eventTrigger}`,
          status: 404,
          body: notFound.event(ids.eventTrigger),
        },
      ],
    };
  };

  /** Private reads B is denied: A (the owner) and the admin get each of them, so the ids are right. */
  const ownerReads = (): string[] => [
    `/v2/workflows/${ids.subWf}`,
    '/v2/workflows/iso_parent',
    '/v2/workbooks/iso_wb',
    '/v2/actions/iso_action',
    '/v2/actions/iso_only_a',
    `/v2/executions/${ids.execution}`,
    `/v2/executions/${ids.execution}/tasks`,
    `/v2/executions/${ids.execution}/executions`,
    `/v2/executions/${ids.execution}/report`,
    `/v2/tasks/${ids.subTask}`,
    `/v2/tasks/${ids.parentTask}/executions`,
    `/v2/action_executions/${ids.actionExecution}`,
    `/v2/action_executions/${ids.adhocActionExecution}`,
    '/v2/cron_triggers/iso_cron',
    `/v2/event_triggers/${ids.eventTrigger}`,
  ];

  it('walks every registered route as project B and never reaches project A', async () => {
    const before = await snapshotOfA();
    const table = walk();
    const registered = stack.routes.map((r) => `${r.method} ${r.url}`);
    expect(registered.length).toBeGreaterThan(50);
    // A route without an entry is a route nobody checked; an entry without a route is stale.
    expect(registered.filter((k) => !(k in table))).toEqual([]);
    expect(Object.keys(table).filter((k) => !registered.includes(k))).toEqual([]);

    // The private reads B is about to be denied work for their owner and for an admin.
    for (const p of ownerReads()) {
      expect([p, (await alice.get(p)).status]).toEqual([p, 200]);
      expect([p, (await root.get(p)).status]).toEqual([p, 200]);
    }
    // Mistral: a member is seen by the owner and the member project only, admins included.
    expect((await alice.get(`/v2/workflows/${ids.subWf}/members/proj-c`)).status).toBe(200);

    const failures: string[] = [];
    for (const key of registered) {
      for (const probe of table[key] ?? []) {
        const res = await call(bob, probe.method, probe.path, probe.send);
        const where = `${key}: ${probe.method} ${probe.path}`;
        if (res.status !== probe.status)
          failures.push(`${where} → ${res.status} (expected ${probe.status}) ${res.text.slice(0, 300)}`);
        if (probe.body !== undefined && JSON.stringify(res.body) !== JSON.stringify(probe.body)) {
          failures.push(`${where} → body ${res.text.slice(0, 300)} (expected ${JSON.stringify(probe.body)})`);
        }
        if (probe.list !== undefined) {
          const rows: { id?: string; project_id?: string }[] = res.body?.[probe.list] ?? [];
          const leaked = rows.filter(
            (r) =>
              privateIds.includes(r.id ?? '') ||
              (r.project_id === 'proj-a' &&
                !['iso_pub_wf', 'iso_pub_wb', 'iso_pub_action', 'iso_pub_wb.wb_wf'].includes(
                  (r as { name?: string }).name ?? '',
                )),
          );
          if (leaked.length)
            failures.push(`${where} → lists A's rows ${JSON.stringify(leaked).slice(0, 300)}`);
        }
        // A's secret text may only show where B reads A's public definitions.
        if (probe.shows !== 'public' && res.text.includes(SECRET))
          failures.push(`${where} → shows A's data: ${res.text.slice(0, 300)}`);
      }
    }
    expect(failures).toEqual([]);

    // Nothing of A's changed, and B's own creations with A's names live in B's project.
    expect(await snapshotOfA()).toEqual(before);
    const mine = await bob.get('/v2/cron_triggers');
    expect(mine.body.cron_triggers).toEqual([]);
    expect((await bob.get('/v2/workbooks/iso_wb')).body.project_id).toBe('proj-b');
    expect((await bob.get('/v2/actions/iso_action')).body.project_id).toBe('proj-b');
  });

  it('lets the admin see and list project A (all_projects) where B cannot', async () => {
    const all = await root.get('/v2/executions?all_projects=true');
    expect(all.status).toBe(200);
    expect(all.body.executions.map((e: { id: string }) => e.id)).toEqual(
      expect.arrayContaining([ids.execution, ids.subExecution]),
    );
    const onlyA = await root.get('/v2/executions?project_id=proj-a');
    expect(new Set(onlyA.body.executions.map((e: { project_id: string }) => e.project_id))).toEqual(
      new Set(['proj-a']),
    );
    const again = await call(
      root,
      'POST',
      '/v2/executions',
      json({ id: ids.execution, workflow_id: ids.parentWf }),
    );
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: ids.execution, project_id: 'proj-a' });
  });

  it('returns the caller its own execution for a repeated id (Mistral idempotent create)', async () => {
    const first = await call(
      alice,
      'POST',
      '/v2/executions',
      json({ id: ids.execution, workflow_id: ids.parentWf, input: { secret: 'other' } }),
    );
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ id: ids.execution, project_id: 'proj-a' });
    expect(JSON.parse(first.body.input)).toEqual({ secret: SECRET });
  });
});
