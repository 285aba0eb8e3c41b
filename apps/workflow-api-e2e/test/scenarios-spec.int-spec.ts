import { type AddressInfo } from 'node:net';
import { type RecordedRequest, startHttpServer } from '@osc/testing';
import { SMTPServer } from 'smtp-server';
import { e2eModes } from './support/api-server';
import { SCENARIOS } from './support/basic-scenarios';
import {
  type EngineStack,
  postJson,
  putJson,
  startEngineStack,
  waitForExecution,
} from './support/engine-stack';

jest.setTimeout(60_000);

/**
 * More workflow scenarios of the DSL spec, each run through the HTTP API in both modes. Together with
 * the basic table run by executions.int-spec.ts (support/basic-scenarios.ts) the per-mode count of
 * table-driven workflow scenarios is SCENARIOS.length + SPEC_SCENARIOS.length (checked at the end).
 */
const DEFINITIONS = `
version: '2.0'
next_list:
  tasks:
    a:
      on-success:
        publish:
          branch: {from_a: 1}
        next: [b, c]
    b:
      publish: {b: <% $.from_a + 1 %>}
    c:
      publish: {c: <% $.from_a + 2 %>}
join_dead_by_condition:
  tasks:
    a:
      on-success: j
    b:
      publish: {go: false}
      on-success:
        - j: <% $.go %>
    j:
      join: all
      action: std.noop
inline_params_win:
  tasks:
    t:
      action: std.echo output="inline"
      input:
        output: from input
      publish: {r: <% task().result %>}
targets_then_fail:
  tasks:
    a:
      on-success:
        - b
        - fail msg="stop here"
        - c
    b:
      action: std.noop
    c:
      action: std.noop
join_one_word:
  tasks:
    a:
      action: std.echo output=1
      on-success: j
    b:
      action: std.sleep seconds=0.3
      on-success: j
    j:
      join: one
      publish: {ran: <% task().name %>}
on_error_filtered:
  tasks:
    t:
      action: std.fail
      on-error:
        - h: <% false %>
    h:
      action: std.noop
noop_handles_on_complete_sees_state:
  tasks:
    t:
      action: std.fail error_data="x"
      on-error: noop
      on-complete:
        - after_error: <% task().state = 'ERROR' %>
        - after_success: <% task().state = 'SUCCESS' %>
    after_error:
      publish: {seen: error}
    after_success:
      publish: {seen: success}
succeed_with_message:
  tasks:
    t:
      publish: {x: 5}
      on-success:
        - succeed msg="done at <% $.x %>"
pause_with_message:
  tasks:
    t:
      on-success:
        - pause msg="hold on"
        - after
    after:
      publish: {resumed: true}
join_failed:
  tasks:
    a:
      on-success: j
    b:
      action: std.fail
      on-success: j
      on-error: noop
    c:
      action: std.fail
      on-success: j
      on-error: noop
    j:
      join: 2
      action: std.noop
publish_precedence:
  tasks:
    t:
      action: std.echo output=1
      publish: {v: plain, p: plain}
      on-success:
        publish:
          branch: {v: success}
        next: done
      on-complete:
        publish:
          branch: {v: complete, w: complete}
    done:
      action: std.noop
publish_on_error_clause:
  tasks:
    t:
      action: std.fail error_data="oops"
      publish-on-error: {why: <% task().result %>, where: plain}
      on-error:
        publish:
          branch: {where: clause}
        next: h
    h:
      action: std.echo output="<% $.why %>/<% $.where %>"
      publish: {seen: <% task().result %>}
global_across_branches:
  tasks:
    writer:
      on-success:
        publish:
          branch: {local: mine}
          global: {shared: 41}
        next: j
    reader:
      action: std.sleep seconds=0.3
      on-success: j
    j:
      join: all
      action: std.echo output=<% global(shared) + 1 %>
      publish: {total: <% task().result %>}
rev_diamond:
  type: reverse
  tasks:
    a:
      action: std.echo output=1
      publish: {a: <% task().result %>}
    b:
      requires: a
      publish: {b: <% $.a + 1 %>}
    c:
      requires: a
      publish: {c: <% $.a + 2 %>}
    d:
      requires: [b, c]
      action: std.echo output=<% $.b + $.c %>
      publish: {d: <% task().result %>}
    unrelated:
      action: std.fail
rev_failed_prerequisite:
  type: reverse
  tasks:
    a:
      action: std.fail error_data="no"
    b:
      requires: [a]
      action: std.noop
nest_env_root:
  tasks:
    call:
      workflow: nest_env_mid
      publish: {got: <% task().result %>}
nest_env_mid:
  output:
    inner: <% $.inner %>
  tasks:
    call:
      workflow: nest_env_leaf
      publish: {inner: <% task().result.seen %>}
nest_env_leaf:
  output:
    seen: <% env().region %>-<% execution().root_execution_id != null %>
  tasks:
    t:
      action: std.noop
nest_bad_input:
  tasks:
    call:
      workflow: nest_child y=1
      on-error: h
    h:
      action: std.noop
nest_child:
  input: [x]
  output:
    doubled: <% $.x * 2 %>
  tasks:
    t:
      action: std.noop
nest_items:
  tasks:
    each:
      with-items: i in <% [1, 2, 3] %>
      workflow: nest_child x=<% $.i %>
      publish: {all: <% task().result.doubled %>}
adhoc_chain:
  tasks:
    t:
      action: shout_greeting who="Bo"
      publish: {r: <% task().result %>}
adhoc_context:
  tasks:
    first:
      publish: {prefix: Dr.}
      on-success: second
    second:
      action: titled who="No"
      publish: {r: <% task().result %>}
adhoc_error_value:
  tasks:
    t:
      action: failing_adhoc
      publish-on-error: {err: <% task().result %>}
      on-error: noop
adhoc_bad_input:
  tasks:
    t:
      action: titled who="X" bogus=1
action_missing_input:
  tasks:
    t:
      action: std.echo
action_unexpected_input:
  tasks:
    t:
      action: std.noop
      input:
        extra: 1
fail_action_default_message:
  tasks:
    t:
      action: std.fail
publish_expression_error:
  tasks:
    t:
      action: std.echo output=1
      publish: {v: <% $.nothing_here %>}
condition_expression_error:
  tasks:
    t:
      on-success:
        - u: <% $.nothing_here > 1 %>
    u:
      action: std.noop
jinja_flow:
  input:
    - word: hey
  vars:
    times: 2
  tasks:
    t:
      action: std.echo output="{{ _.word * _.times }}"
      publish: {said: "{{ task().result }}"}
      on-success:
        - loud: "{{ _.said | length > 4 }}"
    loud:
      publish: {len: "{{ _.said | length }}"}
env_evaluated:
  tasks:
    t:
      action: std.echo output=<% env().b %>
      publish: {b: <% task().result %>}
env_action_defaults:
  tasks:
    t:
      action: std.echo
      publish: {r: <% task().result %>}
http_get:
  input: [base]
  tasks:
    t:
      action: std.http url="<% $.base %>/json" params=<% {q => 'a b'} %> headers=<% {'X-Trace' => 'e2e'} %>
      publish:
        status: <% task().result.status %>
        content: <% task().result.content %>
http_post_auth:
  input: [base]
  tasks:
    t:
      action: std.http
      input:
        url: <% $.base %>/echo
        method: POST
        body: {name: vol1, size: 2}
        auth: alice:secret
      publish:
        status: <% task().result.status %>
        content: <% task().result.content %>
http_not_found:
  input: [base]
  tasks:
    t:
      action: std.http url="<% $.base %>/missing"
      publish-on-error:
        status: <% task().result.status %>
        content: <% task().result.content %>
      on-error: noop
http_unreachable:
  input: [base]
  tasks:
    t:
      action: std.http url="<% $.base %>/x" timeout=2
mistral_http_callback:
  input: [base]
  tasks:
    t:
      action: std.mistral_http url="<% $.base %>/mistral" method="POST" body=<% {k => 1} %>
      publish: {r: <% task().result %>}
email_send:
  input: [smtp]
  tasks:
    t:
      action: std.email
      input:
        from_addr: wf@example.org
        to_addrs: [ops@example.org, dev@example.org]
        smtp_server: <% $.smtp %>
        subject: Run <% execution().name %>
        body: all good
      publish: {sent: <% task().result %>}
`;

const ACTIONS = `
version: '2.0'
titled:
  base: std.echo
  base-input:
    output: "<% $.prefix %> <% $.who %>"
  input: [who]
greeting:
  base: std.echo
  base-input:
    output: "hi <% $.who %>"
  input: [who]
  output: <% $ + '!' %>
shout_greeting:
  base: greeting
  base-input:
    who: <% $.who %>
  input: [who]
  output: <% $.toUpper() %>
failing_adhoc:
  base: std.fail error_data="inner"
  output: never applied
`;

interface Servers {
  http: string;
  smtp: string;
  closedPort: string;
  requests: RecordedRequest[];
  mails: { from: string | undefined; to: string[]; raw: string }[];
}

interface Run {
  stack: EngineStack;
  servers: Servers;
  id: string;
  ex: Record<string, any>;
  tasks: Record<string, any>[];
}

interface Scenario {
  name: string;
  workflow: string;
  input?: (s: Servers) => Record<string, unknown>;
  params?: Record<string, unknown>;
  /** The POST is refused: no execution is created (input validation at start, DSL-13.1). */
  rejected?: { status: number; faultstring: string };
  /** Waits for this state, then calls `drive` (e.g. to resume) before waiting for the end. */
  pausedWith?: { stateInfo: string; drive: (stack: EngineStack, id: string) => Promise<void> };
  state?: string;
  output?: unknown;
  stateInfo?: string | RegExp | null;
  /** Final state of each task (last execution per name), exactly these names. */
  tasks?: Record<string, string>;
  /** `published` of the named tasks. */
  published?: Record<string, unknown>;
  taskStateInfo?: Record<string, string | RegExp | null>;
  publishedGlobal?: Record<string, unknown>;
  check?: (run: Run) => void | Promise<void>;
}

const matches = (actual: unknown, expected: string | RegExp | null) =>
  expected instanceof RegExp ? expect(actual).toMatch(expected) : expect(actual).toBe(expected);

const SPEC_SCENARIOS: Scenario[] = [
  // transitions and engine commands
  {
    name: 'clause publish with a next list starts every listed task',
    workflow: 'next_list',
    state: 'SUCCESS',
    output: { from_a: 1, b: 2, c: 3 },
    tasks: { a: 'SUCCESS', b: 'SUCCESS', c: 'SUCCESS' },
    published: { a: { from_a: 1 } },
  },
  {
    name: 'join all fails when an inbound transition condition is false',
    workflow: 'join_dead_by_condition',
    state: 'ERROR',
    tasks: { a: 'SUCCESS', b: 'SUCCESS', j: 'ERROR' },
    taskStateInfo: { j: "Failed by tasks: ['b']" },
  },
  {
    name: 'inline parameters win over the input map',
    workflow: 'inline_params_win',
    state: 'SUCCESS',
    output: { r: 'inline' },
  },
  {
    name: 'targets before a fail command start, those after it are dropped',
    workflow: 'targets_then_fail',
    state: 'ERROR',
    stateInfo: 'stop here',
    check: ({ tasks }) => expect(tasks.map((t) => t['name']).sort()).toEqual(['a', 'b']),
  },
  {
    name: 'join one runs with the first arrival',
    workflow: 'join_one_word',
    state: 'SUCCESS',
    output: { ran: 'j' },
    tasks: { a: 'SUCCESS', b: 'SUCCESS', j: 'SUCCESS' },
    check: ({ tasks }) => expect(tasks.filter((t) => t['name'] === 'j')).toHaveLength(1),
  },
  {
    name: 'on-error items filtered out by their condition leave the error unhandled',
    workflow: 'on_error_filtered',
    state: 'ERROR',
    stateInfo:
      /^Failure caused by error in tasks: t\n\n {2}t \[task_ex_id=[^\]]+\] -> The action raised an exception/,
    tasks: { t: 'ERROR' },
  },
  {
    name: 'on-error noop handles the error and on-complete conditions see the task state',
    workflow: 'noop_handles_on_complete_sees_state',
    state: 'SUCCESS',
    output: { seen: 'error' },
    tasks: { t: 'ERROR', after_error: 'SUCCESS' },
  },
  {
    name: 'succeed command with a message',
    workflow: 'succeed_with_message',
    state: 'SUCCESS',
    stateInfo: 'done at 5',
    output: { x: 5 },
  },
  {
    name: 'pause command with a message keeps the targets after it for the resume',
    workflow: 'pause_with_message',
    pausedWith: {
      stateInfo: 'hold on',
      drive: async (stack, id) => {
        const tasks = (await stack.client.get(`/v2/executions/${id}/tasks`)).body.tasks;
        expect(tasks.map((t: any) => t.name)).toEqual(['t']);
        expect((await putJson(stack.client, `/v2/executions/${id}`, { state: 'RUNNING' })).status).toBe(200);
      },
    },
    state: 'SUCCESS',
    output: { resumed: true },
    tasks: { t: 'SUCCESS', after: 'SUCCESS' },
  },
  // joins and publish scopes
  {
    name: 'join 2 of 3 fails when two inbound tasks are dead',
    workflow: 'join_failed',
    state: 'ERROR',
    tasks: { a: 'SUCCESS', b: 'ERROR', c: 'ERROR', j: 'ERROR' },
    taskStateInfo: { j: /^Failed by tasks: \[('b', 'c'|'c', 'b')\]$/ },
    stateInfo: /^Failure caused by error in tasks: j\n/,
  },
  {
    // Observed on the real Mistral 15: on-complete over plain over the state clause (the spec's
    // DSL-14.6 says the reverse; the server wins).
    name: 'publish precedence: on-complete over plain over the state clause',
    workflow: 'publish_precedence',
    state: 'SUCCESS',
    published: { t: { v: 'complete', w: 'complete', p: 'plain' } },
  },
  {
    name: 'publish-on-error sees the error value and wins over the on-error clause (as Mistral 15)',
    workflow: 'publish_on_error_clause',
    state: 'SUCCESS',
    published: { t: { why: 'oops', where: 'plain' }, h: { seen: 'oops/plain' } },
    tasks: { t: 'ERROR', h: 'SUCCESS' },
  },
  {
    name: 'a global published in one branch is read in another; branch variables stay in their branch',
    workflow: 'global_across_branches',
    state: 'SUCCESS',
    output: { local: 'mine', total: 42 },
    publishedGlobal: { shared: 41 },
    published: { writer: { local: 'mine' }, j: { total: 42 } },
  },
  // reverse workflows
  {
    name: 'reverse diamond runs the shared prerequisite once and skips unrelated tasks',
    workflow: 'rev_diamond',
    params: { task_name: 'd' },
    state: 'SUCCESS',
    output: { a: 1, b: 2, c: 3, d: 5 },
    tasks: { a: 'SUCCESS', b: 'SUCCESS', c: 'SUCCESS', d: 'SUCCESS' },
    check: ({ tasks }) => expect(tasks.filter((t) => t['name'] === 'a')).toHaveLength(1),
  },
  {
    name: 'reverse workflow fails with its prerequisite and never starts the target',
    workflow: 'rev_failed_prerequisite',
    params: { task_name: 'b' },
    state: 'ERROR',
    tasks: { a: 'ERROR' },
    stateInfo:
      /^Failure caused by error in tasks: a\n\n {2}a \[task_ex_id=[^\]]+\] -> no\n {4}\[action_ex_id=[^\]]+, idx=0\]: no\n$/,
  },
  // nested workflows
  {
    name: 'two levels of nesting see the root env and their root execution',
    workflow: 'nest_env_root',
    params: { env: { region: 'north' } },
    state: 'SUCCESS',
    output: { got: { inner: 'north-True' } },
    check: async ({ stack, id }) => {
      const tree = (await stack.client.get(`/v2/executions/${id}/executions`)).body.executions;
      expect(
        tree.map((e: any) => [
          e.workflow_name,
          e.root_execution_id === null ? null : e.root_execution_id === id,
        ]),
      ).toEqual([
        ['nest_env_root', null],
        ['nest_env_mid', true],
        ['nest_env_leaf', true],
      ]);
    },
  },
  {
    name: 'missing sub-workflow input fails the execution at once (other keys become params), on-error does not run',
    workflow: 'nest_bad_input',
    state: 'ERROR',
    stateInfo:
      "Failed to run task [error=Invalid input [name=nest_child, class=DirectWorkflowSpec, missing=['x']], wf=nest_bad_input, task=call]",
    tasks: { call: 'ERROR' },
  },
  {
    name: 'with-items over a sub-workflow collects the outputs in item order',
    workflow: 'nest_items',
    state: 'SUCCESS',
    output: { all: [2, 4, 6] },
    check: async ({ stack, id }) => {
      const subs = (await stack.client.get(`/v2/executions?root_execution_id=${id}`)).body.executions;
      expect(subs).toHaveLength(3);
    },
  },
  // ad-hoc actions
  {
    name: 'ad-hoc action on an ad-hoc base applies the inner output first',
    workflow: 'adhoc_chain',
    state: 'SUCCESS',
    output: { r: 'HI BO!' },
  },
  {
    name: 'ad-hoc base-input sees the calling task context',
    workflow: 'adhoc_context',
    state: 'SUCCESS',
    published: { second: { r: 'Dr. No' } },
  },
  {
    name: 'ad-hoc error result keeps the base error value',
    workflow: 'adhoc_error_value',
    state: 'SUCCESS',
    published: { t: { err: 'inner' } },
    tasks: { t: 'ERROR' },
  },
  {
    name: 'ad-hoc action with an undeclared parameter is a fatal input error',
    workflow: 'adhoc_bad_input',
    state: 'ERROR',
    stateInfo:
      /^Failed to run task \[error=Invalid input \[name=titled, class=[^,]+, unexpected=\['bogus'\]\], wf=adhoc_bad_input, task=t\]$/,
  },
  // action input validation and error paths
  {
    name: 'missing action parameter is a fatal input error',
    workflow: 'action_missing_input',
    state: 'ERROR',
    stateInfo:
      "Failed to run task [error=Invalid input [name=std.echo, class=mistral.actions.std_actions.EchoAction, missing=['output']], wf=action_missing_input, task=t]",
    taskStateInfo: {
      t: "Failed to run task [error=Invalid input [name=std.echo, class=mistral.actions.std_actions.EchoAction, missing=['output']], wf=action_missing_input, task=t]",
    },
  },
  {
    name: 'unexpected action parameter is a fatal input error',
    workflow: 'action_unexpected_input',
    state: 'ERROR',
    stateInfo:
      "Failed to run task [error=Invalid input [name=std.noop, class=mistral.actions.std_actions.NoOpAction, unexpected=['extra']], wf=action_unexpected_input, task=t]",
  },
  {
    name: 'std.fail without data fails with the exception text',
    workflow: 'fail_action_default_message',
    state: 'ERROR',
    taskStateInfo: {
      t: /^The action raised an exception \[action=.*, action_ex_id=[^,]+, msg='Fail action expected exception\.'\]$/,
    },
    stateInfo: /^Failure caused by error in tasks: t\n/,
  },
  {
    name: 'publish expression error fails the execution while handling the result',
    workflow: 'publish_expression_error',
    state: 'ERROR',
    stateInfo:
      /^Failed to handle action completion \[error=Can not evaluate YAQL expression \[expression=\$\.nothing_here.*wf=publish_expression_error, task=t, action=std\.echo\]$/s,
  },
  {
    name: 'transition condition expression error fails the execution',
    workflow: 'condition_expression_error',
    state: 'ERROR',
    stateInfo: /Can not evaluate YAQL expression \[expression=\$\.nothing_here > 1/,
  },
  // expressions, env
  {
    name: 'Jinja in action input, publish and conditions with vars and input',
    workflow: 'jinja_flow',
    state: 'SUCCESS',
    output: { said: 'heyhey', len: 6 },
  },
  {
    name: 'env expressions are evaluated at start',
    workflow: 'env_evaluated',
    params: { env: { a: 1, b: '<% env().a + 1 %>' } },
    state: 'SUCCESS',
    output: { b: 2 },
  },
  {
    name: 'evaluate_env false keeps env expressions as text',
    workflow: 'env_evaluated',
    params: { env: { a: 1, b: '<% env().a + 1 %>' }, evaluate_env: false },
    state: 'SUCCESS',
    output: { b: '<% env().a + 1 %>' },
  },
  {
    name: 'env __actions fills parameters the task did not set',
    workflow: 'env_action_defaults',
    params: { env: { __actions: { 'std.echo': { output: 'from env' } } } },
    state: 'SUCCESS',
    output: { r: 'from env' },
  },
  // input validation when the execution is created
  {
    name: 'a missing workflow input refuses the execution',
    workflow: 'http_get',
    rejected: {
      status: 400,
      faultstring: "Invalid input [name=http_get, class=DirectWorkflowSpec, missing=['base']]",
    },
  },
  {
    name: 'a reverse target that is not a task refuses the execution',
    workflow: 'rev_diamond',
    params: { task_name: 'nope' },
    rejected: { status: 400, faultstring: 'Invalid task name [wf_spec=ReverseWorkflowSpec, task_name=nope]' },
  },
  {
    name: 'an env naming no stored environment refuses the execution',
    workflow: 'env_evaluated',
    params: { env: 'nowhere' },
    rejected: { status: 400, faultstring: 'Environment is not found: nowhere' },
  },
  // standard actions against real local servers
  {
    name: 'std.http GET with params and headers parses JSON content',
    workflow: 'http_get',
    input: (s) => ({ base: s.http }),
    state: 'SUCCESS',
    output: { status: 200, content: { hello: 'world' } },
    check: ({ servers }) => {
      const req = servers.requests.find((r) => r.url.startsWith('/json'))!;
      expect(req.method).toBe('GET');
      expect(req.url).toBe('/json?q=a+b');
      expect(req.headers['x-trace']).toBe('e2e');
    },
  },
  {
    name: 'std.http POST sends a map body as JSON with basic auth',
    workflow: 'http_post_auth',
    input: (s) => ({ base: s.http }),
    state: 'SUCCESS',
    output: {
      status: 201,
      content: {
        got: { name: 'vol1', size: 2 },
        auth: `Basic ${Buffer.from('alice:secret').toString('base64')}`,
      },
    },
  },
  {
    name: 'std.http status 404 fails the action with the response map as error value',
    workflow: 'http_not_found',
    input: (s) => ({ base: s.http }),
    state: 'SUCCESS',
    published: { t: { status: 404, content: 'nothing here' } },
    tasks: { t: 'ERROR' },
  },
  {
    name: 'std.http transport failure',
    workflow: 'http_unreachable',
    input: (s) => ({ base: s.closedPort }),
    state: 'ERROR',
    taskStateInfo: { t: /Failed to send HTTP request: / },
  },
  {
    name: 'std.mistral_http sends the execution headers and completes through the callback',
    workflow: 'mistral_http_callback',
    input: (s) => ({ base: s.http }),
    state: 'SUCCESS',
    check: ({ servers, id, tasks, ex }) => {
      const req = servers.requests.find(
        (r) => r.url === '/mistral' && r.headers['mistral-workflow-execution-id'] === id,
      )!;
      expect(req.method).toBe('POST');
      expect(JSON.parse(req.body)).toEqual({ k: 1 });
      expect(req.headers['mistral-workflow-name']).toBe('mistral_http_callback');
      expect(req.headers['mistral-task-id']).toBe(tasks[0]!['id']);
      expect(req.headers['mistral-callback-url']).toMatch(
        /^http:\/\/127\.0\.0\.1:\d+\/v2\/action_executions\/[0-9a-f-]{36}$/,
      );
      expect(req.headers['mistral-callback-url']).toContain(
        String(req.headers['mistral-action-execution-id']),
      );
      expect(JSON.parse(ex['output'])).toEqual({ r: { called_back: id } });
    },
  },
  {
    name: 'std.email delivers to a real SMTP server',
    workflow: 'email_send',
    input: (s) => ({ smtp: s.smtp }),
    state: 'SUCCESS',
    output: { sent: null },
    check: ({ servers }) => {
      const mail = servers.mails.find((m) => m.raw.includes('Subject: Run email_send'))!;
      expect(mail.from).toBe('wf@example.org');
      expect(mail.to).toEqual(['ops@example.org', 'dev@example.org']);
      expect(mail.raw).toContain('all good');
    },
  },
];

/** Starts the local HTTP and SMTP servers the standard-action scenarios talk to. */
async function startServers(apiBase: () => string) {
  const http = await startHttpServer((req, res) => {
    if (req.url.startsWith('/json')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ hello: 'world' }));
    } else if (req.url === '/echo') {
      res
        .writeHead(201, { 'content-type': 'application/json' })
        .end(JSON.stringify({ got: JSON.parse(req.body), auth: req.headers['authorization'] }));
    } else if (req.url === '/mistral') {
      res.writeHead(200).end('accepted');
      const callback = String(req.headers['mistral-callback-url']);
      const output = JSON.stringify({ called_back: req.headers['mistral-workflow-execution-id'] });
      setTimeout(() => {
        void fetch(callback.startsWith('http') ? callback : `${apiBase()}${callback}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ state: 'SUCCESS', output }),
        });
      }, 100);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('nothing here');
    }
  });
  const mails: Servers['mails'] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  // a port that was just free: nothing listens there
  const probe = await startHttpServer((_r, res) => res.end());
  const closedPort = probe.url;
  await probe.close();
  return {
    servers: {
      http: http.url,
      smtp: `127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
      closedPort,
      requests: http.requests,
      mails,
    } satisfies Servers,
    async close() {
      await http.close();
      await new Promise<void>((r) => smtp.close(() => r()));
    },
  };
}

describe.each(e2eModes())('spec scenarios over HTTP (%s)', (mode) => {
  let stack: EngineStack;
  let servers: Awaited<ReturnType<typeof startServers>>;

  beforeAll(async () => {
    servers = await startServers(() => stack.baseUrl);
    stack = await startEngineStack(mode);
    const actions = await stack.client.post('/v2/actions', ACTIONS);
    if (actions.status !== 201) throw new Error(`action upload failed: ${actions.status} ${actions.text}`);
    const res = await stack.client.post('/v2/workflows', DEFINITIONS);
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await servers?.close();
  }, 60_000);

  const count = async (workflow: string) =>
    (
      (await stack.client.get(`/v2/executions?workflow_name=${workflow}&limit=1000`)).body
        .executions as unknown[]
    ).length;

  it.each(SPEC_SCENARIOS.map((s) => [s.name, s] as const))('%s', async (_n, s) => {
    const before = s.rejected ? await count(s.workflow) : 0;
    const created = await postJson(stack.client, '/v2/executions', {
      workflow_name: s.workflow,
      input: s.input ? s.input(servers.servers) : {},
      params: s.params ?? {},
    });
    if (s.rejected) {
      expect(created).toMatchObject({
        status: s.rejected.status,
        body: { faultstring: s.rejected.faultstring },
      });
      expect((await count(s.workflow)) - before).toBe(0);
      return;
    }
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    if (s.pausedWith) {
      const paused = await waitForExecution(stack.client, id, ['PAUSED', 'SUCCESS', 'ERROR', 'CANCELLED']);
      expect(paused.state).toBe('PAUSED');
      expect(paused.state_info).toBe(s.pausedWith.stateInfo);
      await s.pausedWith.drive(stack, id);
    }
    const ex = await waitForExecution(stack.client, id);
    expect({ state: ex.state, state_info: ex.state_info }).toMatchObject({ state: s.state });
    if (s.stateInfo !== undefined) matches(ex.state_info, s.stateInfo);
    if (s.output !== undefined) expect(JSON.parse(ex.output)).toEqual(s.output);
    if (s.publishedGlobal !== undefined) expect(JSON.parse(ex.published_global)).toEqual(s.publishedGlobal);
    const tasks = (await stack.client.get(`/v2/executions/${id}/tasks`)).body.tasks as Record<string, any>[];
    const last = (name: string) => tasks.filter((t) => t['name'] === name).pop();
    if (s.tasks) expect(Object.fromEntries(tasks.map((t) => [t['name'], t['state']]))).toEqual(s.tasks);
    for (const [name, published] of Object.entries(s.published ?? {}))
      expect(JSON.parse(last(name)?.['published'] ?? 'null')).toEqual(published);
    for (const [name, info] of Object.entries(s.taskStateInfo ?? {}))
      matches(last(name)?.['state_info'], info);
    await s.check?.({ stack, servers: servers.servers, id, ex, tasks });
  });
});

it('the two scenario tables hold at least 60 distinct workflow scenarios per mode', () => {
  const names = new Set([...SCENARIOS, ...SPEC_SCENARIOS].map((s) => s.name));
  expect(names.size).toBe(SCENARIOS.length + SPEC_SCENARIOS.length);
  expect(names.size).toBeGreaterThanOrEqual(60);
});
