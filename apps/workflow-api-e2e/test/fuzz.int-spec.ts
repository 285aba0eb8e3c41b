import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  type FuzzAnswer,
  type FuzzRequest,
  type FuzzRoute,
  type FuzzTarget,
  type Rng,
  fuzzPlan,
  routeCases,
  runFuzz,
} from '@osc/testing';
import { FakeKeystone } from '@osc/http-common';
import { loadConfig } from '@osc/workflow-api';
import { e2eModes } from './support/api-server';
import { type EngineStack, startEngineStack, waitForExecution } from './support/engine-stack';
import {
  ACTIONS,
  DIRECT_WF,
  REVERSE_WF,
  TWO_WORKFLOWS,
  WORKBOOK,
  simpleAction,
  simpleWorkflow,
} from './support/fixtures';

/**
 * Fuzzing the whole Mistral API (issue #15 item 5): 10,000 generated requests per mode (embedded and
 * PostgreSQL) aimed at every registered route (the route table the cross-project suite walks), each
 * making one part odd while the rest stays well-formed: the body (mutated JSON and YAML, values of the
 * wrong type, huge and unicode strings, deep nesting, over the size limit, chunked), the query string
 * (list parameters with odd values, repeated keys, broken percent-encoding), a path parameter
 * (malformed ids, very long names) or the headers (content type, accept, X-Auth-Token and the identity
 * headers keystonemiddleware sets; the API runs in keystone mode against a FakeKeystone).
 * Every answer is a 2xx, 3xx or 4xx; every 4xx of the API is in Mistral's error format (a
 * `faultstring`); no request goes unanswered (a reset or closed connection is a finding).
 *
 * The cases are seeded: the run prints its seed, `FUZZ_SEED=<n>` changes it, `FUZZ_CASES=<i,j>`
 * replays single cases (each case depends only on the seed and its index) and `FUZZ_COUNT=<n>`
 * sets the count. Requests run eight at a time over keep-alive connections.
 */
const COUNT = Number(process.env['FUZZ_COUNT'] ?? 10_000);
const CONCURRENCY = 8;
const BODY_LIMIT = 64 * 1024;
const PROJECT = 'fuzz-project';
/** Keystone tokens: the API runs in keystone mode against a FakeKeystone. */
const TOKENS = {
  member: 'fz-member-token',
  admin: 'fz-admin-token',
  reader: 'fz-reader-token',
  other: 'fz-other-project-token',
} as const;
const IDENTITY = { 'x-auth-token': TOKENS.member };
/** keystonemiddleware's own answer to a missing or invalid token. */
const KEYSTONE_401 = {
  error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
};

const CODE = `export class Fz { run() { return 1; } }\n`;

/** Query keys Mistral's lists read, and a few they do not. */
const QUERY_KEYS = [
  'marker',
  'limit',
  'sort_keys',
  'sort_dirs',
  'fields',
  'name',
  'id',
  'input',
  'output',
  'params',
  'definition',
  'tags',
  'scope',
  'project_id',
  'created_at',
  'updated_at',
  'all_projects',
  'namespace',
  'is_system',
  'description',
  'state',
  'state_info',
  'workflow_name',
  'workflow_id',
  'workflow_namespace',
  'workflow_execution_id',
  'task_execution_id',
  'task_name',
  'root_execution_id',
  'include_output',
  'type',
  'skip_validation',
  'identifier',
  'force',
  'accepted',
  'member_id',
  'status',
  'pattern',
  'remaining_executions',
  'first_execution_time',
  'next_execution_time',
  'topic',
  'exchange',
  'event',
  'class_name',
  'code_source_id',
  'code_source_name',
  'variables',
  'action_name',
  'nulls',
  'bogus',
];
const SANE_VALUES: Record<string, readonly string[]> = {
  limit: ['1', '2', '10', '1000'],
  sort_keys: ['name', 'created_at', 'name,id', 'id', 'updated_at', 'state'],
  sort_dirs: ['asc', 'desc', 'asc,desc'],
  fields: ['name', 'id,name', 'input', 'state,workflow_name'],
  scope: ['private', 'public'],
  all_projects: ['true', 'false'],
  include_output: ['true', 'false'],
  created_at: ['gt:2016-12-01 15:01:00', 'lte:2100-01-01 00:00:00'],
  state: ['SUCCESS', 'in:RUNNING,ERROR', 'neq:ERROR'],
  name: ['wf_a', 'eq:wf_a', 'has:wf', 'in:wf_a,wf_b'],
  tags: ['vm', 'vm,example'],
};

describe.each(e2eModes())('fuzzing every route of the workflow API (%s)', (mode) => {
  let stack: EngineStack;
  let consoleDir: string;
  const keystone = new FakeKeystone();
  const pools: Record<string, string[]> = {};
  /** Resources DELETE routes may remove: the other routes keep theirs to the end of the run. */
  const spares: Record<string, string[]> = {};

  const ok = async (
    method: string,
    url: string,
    body?: string,
    type = 'text/plain',
    headers: Record<string, string> = IDENTITY,
  ): Promise<any> => {
    const res = await stack.client.as(headers).send(method, url, body, type);
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
    return res.body;
  };
  const okJson = (method: string, url: string, body: unknown) =>
    ok(method, url, JSON.stringify(body), 'application/json');

  /** Two of each resource: the first for every route, the second for DELETE. */
  const seedResources = async (): Promise<void> => {
    const admin = { 'x-auth-token': TOKENS.admin };
    const wfs = (await ok('POST', '/v2/workflows', TWO_WORKFLOWS)).workflows;
    await ok('POST', '/v2/workflows', DIRECT_WF);
    await ok('POST', '/v2/workflows', REVERSE_WF);
    const pub = (
      await ok('POST', '/v2/workflows?scope=public', simpleWorkflow('fz_public'), 'text/plain', admin)
    ).workflows[0];
    const spareWf = (await ok('POST', '/v2/workflows', simpleWorkflow('fz_spare'))).workflows[0];
    await ok('POST', '/v2/workbooks', WORKBOOK);
    await ok('POST', '/v2/workbooks', WORKBOOK.replace('name: my_wb', 'name: spare_wb'));
    const actions = (await ok('POST', '/v2/actions', ACTIONS)).actions;
    const spareAction = (await ok('POST', '/v2/actions', simpleAction('fz_spare_action'))).actions[0];
    const wfA = wfs.find((w: { name: string }) => w.name === 'wf_a');

    const execution = (await okJson('POST', '/v2/executions', { workflow_id: wfA.id, description: 'fuzz' }))
      .id;
    const spareExecution = (
      await okJson('POST', '/v2/executions', { workflow_name: 'wf_b', input: { x: 1 } })
    ).id;
    const client = stack.client.as(IDENTITY);
    await waitForExecution(client, execution, ['SUCCESS']);
    await waitForExecution(client, spareExecution, ['SUCCESS']);
    const task = (await ok('GET', `/v2/executions/${execution}/tasks`)).tasks[0].id;
    const actionExecution = (await ok('GET', `/v2/tasks/${task}/action_executions`)).action_executions[0].id;
    const adhoc = async () =>
      (
        await okJson('POST', '/v2/action_executions', {
          name: 'std.echo',
          input: { output: 'x' },
          params: { save_result: true, run_sync: true },
        })
      ).id;
    const cron = (
      await okJson('POST', '/v2/cron_triggers', {
        name: 'fz_cron',
        workflow_id: wfA.id,
        pattern: '0 0 1 1 *',
      })
    ).id;
    const spareCron = (
      await okJson('POST', '/v2/cron_triggers', {
        name: 'fz_spare_cron',
        workflow_id: wfA.id,
        pattern: '0 0 2 1 *',
      })
    ).id;
    const event = async (name: string) =>
      (
        await okJson('POST', '/v2/event_triggers', {
          name,
          workflow_id: wfA.id,
          exchange: 'x',
          topic: name,
          event: 'e',
        })
      ).id;
    await okJson('POST', `/v2/workflows/${wfA.id}/members`, { member_id: 'fuzz-member' });
    const spareMemberWf = spareWf.id;
    await okJson('POST', `/v2/workflows/${spareMemberWf}/members`, { member_id: 'fuzz-member' });
    await okJson('POST', '/v2/environments', { name: 'fz_env', variables: { a: 1 } });
    await okJson('POST', '/v2/environments', { name: 'fz_spare_env', variables: { a: 1 } });
    const code = (await ok('POST', '/v2/code_sources?name=fz_code', CODE)).id;
    const spareCode = (await ok('POST', '/v2/code_sources?name=fz_spare_code', CODE)).id;
    const dyn = (
      await okJson('POST', '/v2/dynamic_actions', { name: 'fz_dyn', class_name: 'Fz', code_source_id: code })
    ).id;
    const spareDyn = (
      await okJson('POST', '/v2/dynamic_actions', {
        name: 'fz_spare_dyn',
        class_name: 'Fz',
        code_source_id: code,
      })
    ).id;

    Object.assign(pools, {
      workflows: ['wf_a', wfA.id, 'wf_b', 'create_vm', 'deploy', pub.id, 'my_wb.main'],
      members: ['fuzz-member', PROJECT],
      workbooks: ['my_wb'],
      actions: ['concat', actions[0].id, 'shout', 'std.echo', 'my_wb.greet'],
      executions: [execution, spareExecution],
      tasks: [task],
      action_executions: [actionExecution, await adhoc()],
      cron_triggers: ['fz_cron', cron],
      event_triggers: [await event('fz_event')],
      environments: ['fz_env'],
      code_sources: [code, 'fz_code'],
      dynamic_actions: [dyn, 'fz_dyn'],
    });
    Object.assign(spares, {
      workflows: ['fz_spare', spareWf.id],
      members: ['fuzz-member'],
      workbooks: ['spare_wb'],
      actions: ['fz_spare_action', spareAction.id],
      executions: [spareExecution],
      action_executions: [await adhoc()],
      cron_triggers: ['fz_spare_cron', spareCron],
      event_triggers: [await event('fz_spare_event')],
      environments: ['fz_spare_env'],
      code_sources: [spareCode, 'fz_spare_code'],
      dynamic_actions: [spareDyn, 'fz_spare_dyn'],
    });
    pools['workflowId'] = [wfA.id];
    spares['workflowId'] = [spareMemberWf];
  };

  /** Well-formed JSON bodies per route (the mutations start from these). */
  const bodies = (route: FuzzRoute): unknown[] => {
    const wf = pools['workflowId']?.[0];
    const ex = pools['executions']?.[0];
    const key = `${route.method} ${route.url}`;
    switch (key) {
      case 'POST /v2/executions':
        return [
          { workflow_id: wf, input: '{"x": 1}', params: '{"env": {"a": 1}}', description: 'd' },
          {
            workflow_name: 'wf_b',
            workflow_namespace: '',
            input: { x: 1, y: [1, 2] },
            params: { task_name: 't1', env: 'fz_env' },
          },
          { id: ex, workflow_id: wf },
          { workflow_name: 'create_vm', input: { vm_name: 'a', image_ref: 'b' }, source_execution_id: ex },
        ];
      case 'PUT /v2/executions/:id':
        return [
          { state: 'PAUSED' },
          { state: 'CANCELLED', state_info: 'why' },
          { description: 'new' },
          { params: { env: { a: 2 } } },
          { state: 'ERROR', state_info: 'x' },
        ];
      case 'PUT /v2/tasks/:id':
        return [
          { state: 'RUNNING', reset: true },
          { state: 'RUNNING', reset: false, env: { a: 1 } },
        ];
      case 'POST /v2/action_executions':
        return [
          { name: 'std.echo', input: '{"output": "x"}', params: '{"save_result": true, "run_sync": true}' },
          {
            name: 'concat',
            input: { left: 'a', right: 'b' },
            description: 'd',
            params: { run_sync: true, timeout: 5 },
          },
          { name: 'std.noop', workflow_name: 'wf_a', task_name: 't1' },
        ];
      case 'PUT /v2/action_executions/:id':
        return [
          { state: 'ERROR', output: 'x' },
          { state: 'SUCCESS', output: '{"result": 1}' },
          { state: 'PAUSED' },
        ];
      case 'POST /v2/cron_triggers':
        return [
          {
            name: 'fz_new_cron',
            workflow_id: wf,
            pattern: '0 0 1 1 *',
            workflow_input: { x: 1 },
            workflow_params: {},
          },
          {
            name: 'fz_new_cron2',
            workflow_name: 'wf_a',
            first_execution_time: '2099-01-01 00:00',
            remaining_executions: 2,
          },
        ];
      case 'POST /v2/event_triggers':
        return [
          {
            name: 'fz_new_event',
            workflow_id: wf,
            exchange: 'openstack',
            topic: 'notifications',
            event: 'compute.instance.create.end',
            workflow_input: {},
            workflow_params: {},
          },
        ];
      case 'PUT /v2/event_triggers/:id':
        return [{ name: 'renamed' }, { workflow_params: { env: {} } }];
      case 'POST /v2/environments':
      case 'PUT /v2/environments':
        return [
          { name: 'fz_env', description: 'd', variables: { a: 1, b: [1, 2] }, scope: 'private' },
          { name: 'fz_new_env', variables: '{"a": 1}' },
        ];
      case 'POST /v2/workflows/:workflowId/members':
        return [{ member_id: 'fuzz-other' }];
      case 'PUT /v2/workflows/:workflowId/members/:memberId':
        return [{ status: 'accepted' }, { status: 'rejected' }];
      case 'POST /v2/dynamic_actions':
      case 'PUT /v2/dynamic_actions':
        return [
          { name: 'fz_dyn', class_name: 'Fz', code_source_id: pools['code_sources']?.[0], description: 'd' },
          { name: 'fz_new_dyn', class_name: 'Fz', code_source_name: 'fz_code' },
        ];
      default:
        return [{}];
    }
  };

  /** Definition uploads and code sources read text; the mutations edit these documents. */
  const texts = (route: FuzzRoute): string[] => {
    if (route.method === 'GET' || route.method === 'DELETE') return [];
    const url = route.url;
    if (url.startsWith('/v2/workflows') && !url.includes('members'))
      return [TWO_WORKFLOWS, DIRECT_WF, REVERSE_WF];
    if (url.startsWith('/v2/workbooks')) return [WORKBOOK];
    if (url.startsWith('/v2/actions')) return [ACTIONS, simpleAction('concat')];
    if (url.startsWith('/v2/code_sources')) return [CODE, 'const x = 1;\n'];
    return [];
  };

  const target = (): FuzzTarget => ({
    routes: stack.routes.map((r) => ({ ...r, weight: r.method === 'DELETE' ? 0.5 : 1 })),
    param: (name, before, route) => {
      const kind = name === 'workflowId' ? 'workflowId' : name === 'memberId' ? 'members' : before;
      return (route.method === 'DELETE' ? spares[kind] : pools[kind]) ?? [];
    },
    bodies,
    texts,
    queryKeys: QUERY_KEYS,
    queryValue: (key: string, rng: Rng) =>
      rng.pick(SANE_VALUES[key] ?? pools[`${key.replace(/_id$/, '')}s`] ?? ['x', 'wf_a', '1']),
    headers: (rng) => ({
      'x-auth-token': rng.pick([TOKENS.member, TOKENS.member, TOKENS.admin, TOKENS.reader, TOKENS.other]),
      accept: 'application/json',
    }),
    oddHeaders: (rng): Record<string, string | null> => {
      if (rng.chance(0.5)) {
        // a token Keystone does not know, an empty or huge one, none at all
        const token = rng.pick([
          '',
          ' ',
          'unknown-token',
          `${TOKENS.member} `,
          TOKENS.member.toUpperCase(),
          `gAAAAA${'A'.repeat(180)}`,
          oddValue(rng),
        ]);
        return { 'x-auth-token': rng.chance(0.15) ? null : token };
      }
      // identity headers a caller cannot set past its token (keystonemiddleware replaces them)
      const name = rng.pick([
        'x-project-id',
        'x-user-id',
        'x-roles',
        'x-tenant-id',
        'x-user-name',
        'x-project-name',
        'x-identity-status',
        'x-service-token',
        'x-service-roles',
      ]);
      return {
        [name]: rng.pick([
          ' ',
          '',
          'admin',
          ',,,',
          'ADMIN',
          'admin, member',
          'Confirmed',
          'other-project',
          oddValue(rng),
        ]),
      };
    },
    contentType: 'application/json',
    bodyLimit: BODY_LIMIT,
  });
  const oddValue = (rng: Rng) =>
    ['\u00e9', 'x'.repeat(rng.pick([300, 4000])), '%00', '0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f'][
      rng.int(0, 3)
    ] ?? 'x';

  /** A finding in one answer: a 5xx, or an API error that is not in Mistral's format. */
  const check = (req: FuzzRequest, answer: FuzzAnswer): string | null => {
    if (answer.status >= 500 || answer.status < 200)
      return `status ${answer.status}: ${answer.text.slice(0, 300)}`;
    // the console's static files answer in text (its own 404 page); they are not the API
    if (answer.status < 400 || req.path.startsWith('/console')) return null;
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return `not JSON: ${answer.text.slice(0, 300)}`;
    }
    if (answer.status === 401 && JSON.stringify(body) === JSON.stringify(KEYSTONE_401)) return null;
    const fault = (body as { faultstring?: unknown } | null)?.faultstring;
    return typeof fault === 'string' && fault.length > 0
      ? null
      : `no faultstring: ${answer.text.slice(0, 300)}`;
  };

  beforeAll(async () => {
    await keystone.start();
    keystone.addToken(TOKENS.member, { user: 'fuzzer', project: PROJECT, roles: ['member', 'reader'] });
    keystone.addToken(TOKENS.admin, {
      user: 'fuzz-admin',
      project: PROJECT,
      roles: ['admin', 'member', 'reader'],
    });
    keystone.addToken(TOKENS.reader, { user: 'fuzz-reader', project: PROJECT, roles: ['reader'] });
    keystone.addToken(TOKENS.other, {
      user: 'fuzz-other',
      project: 'fuzz-other-project',
      roles: ['member', 'reader'],
    });
    const settings = loadConfig({
      AUTH_MODE: 'keystone',
      KEYSTONE_AUTH_URL: keystone.url,
      KEYSTONE_USERNAME: 'mistral',
      KEYSTONE_PASSWORD: keystone.servicePassword,
    }).keystone;
    // a built console of two files, so /console answers what a deployment answers
    consoleDir = mkdtempSync(path.join(os.tmpdir(), 'osc-fuzz-console-'));
    mkdirSync(path.join(consoleDir, 'assets'));
    writeFileSync(path.join(consoleDir, 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(path.join(consoleDir, 'assets', 'x.js'), 'export {};');
    stack = await startEngineStack(mode, {
      authMode: 'keystone',
      keystone: settings,
      allowActionExecutionDeletion: true,
      bodyLimit: BODY_LIMIT,
      consoleDir,
    });
    await seedResources();
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await keystone.stop();
    rmSync(consoleDir, { recursive: true, force: true });
  });

  it('answers 10,000 generated requests over every route with a clean 2xx-4xx, never a 5xx or a reset', async () => {
    const plan = fuzzPlan(process.env, 20150415, COUNT);
    process.stdout.write(
      `workflow-api fuzz (${mode}): seed ${plan.seed}, ${plan.cases.length} cases (FUZZ_SEED, FUZZ_CASES, FUZZ_COUNT to change)\n`,
    );
    const t = target();
    const report = await runFuzz({
      baseUrl: stack.baseUrl,
      seed: plan.seed,
      cases: plan.cases,
      concurrency: CONCURRENCY,
      generate: routeCases(t),
      check,
    });
    process.stdout.write(
      `workflow-api fuzz (${mode}): ${report.sent} requests in ${(report.elapsedMs / 1000).toFixed(1)} s, statuses ${JSON.stringify(report.statuses)}, ` +
        `focus ${JSON.stringify(Object.fromEntries(report.perFocus))}\n`,
    );
    expect(report.findings.slice(0, 20)).toEqual([]);
    if (plan.replay) return;
    expect(report.sent).toBeGreaterThanOrEqual(process.env['FUZZ_COUNT'] ? COUNT : 10_000);
    // every route was aimed at, each with a fair share of the cases (a quarter of an even split)
    const share = Math.floor(COUNT / t.routes.length / 4);
    const thin = t.routes
      .map((r) => `${r.method} ${r.url}`)
      .filter((k) => (report.perRoute.get(k) ?? 0) < share);
    expect(thin).toEqual([]);
  }, 900_000);
});
