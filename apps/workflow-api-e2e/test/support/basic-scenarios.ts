/** The first table of workflow scenarios, run in both modes by executions.int-spec.ts. */

/** Workflows of the basic scenarios (executions.int-spec.ts), uploaded once per mode. */
export const DEFINITIONS = `
version: '2.0'
seq3:
  input:
    - n: 1
  output:
    total: <% $.c %>
  tasks:
    a:
      action: std.echo output=<% $.n %>
      publish: {a: <% task().result %>}
      on-success: b
    b:
      action: std.echo output=<% $.a + 1 %>
      publish: {b: <% task().result %>}
      on-success: c
    c:
      action: std.echo output=<% $.b + 1 %>
      publish: {c: <% task().result %>}
sum_up:
  input:
    - items: [{n: a, v: 1}, {n: b, v: 5}]
  output:
    total: <% $.total %>
    names: <% $.items.select($.n) %>
  tasks:
    add:
      action: std.echo output=<% $.items.select($.v).sum() %>
      publish:
        total: <% task().result %>
guarded:
  tasks:
    attempt:
      action: std.fail
      publish-on-error:
        why: failed
      on-error: cleanup
    cleanup:
      action: std.noop
      publish: {cleaned: true}
guarded_complete:
  tasks:
    attempt:
      action: std.fail
      on-complete: cleanup
    cleanup:
      action: std.noop
fan_in:
  tasks:
    left:
      publish: {l: 1}
      on-success: j
    right:
      action: std.echo output=2
      publish: {r: <% task().result %>}
      on-success: j
    j:
      join: all
      action: std.echo output=<% $.l + $.r %>
      publish: {sum: <% task().result %>}
fan_in_fail:
  tasks:
    left:
      on-success: j
    right:
      action: std.fail
      on-success: j
    j:
      join: all
join_one:
  tasks:
    a:
      action: std.echo output='a'
      publish: {first: a}
      on-success: j
    b:
      action: std.sleep seconds=0.2
      on-success: j
    j:
      join: 1
check:
  input: [n]
  tasks:
    t:
      on-success:
        - fail(msg="too big <% $.n %>"): <% $.n > 2 %>
        - succeed
fail_plain:
  output-on-error:
    extra: yes
  tasks:
    t:
      on-success: fail
branches:
  input: [x]
  tasks:
    u:
      on-success:
        - left: <% $.x = 1 %>
        - right: <% $.x != 1 %>
    left:
      publish: {went: left}
    right:
      publish: {went: right}
globals:
  vars:
    base: 10
  tasks:
    a:
      on-success:
        publish:
          global:
            g: <% $.base + 1 %>
          branch:
            b: 2
        next: c
    c:
      action: std.echo output=<% global(g) %>
      publish: {seen: <% task().result %>}
defaults:
  task-defaults:
    on-error: handler
  tasks:
    t:
      action: std.fail
    handler:
      publish: {handled: true}
unknown_action:
  tasks:
    t:
      action: nope.nope
bad_expression:
  tasks:
    t:
      action: std.echo output=<% $.missing %>
rev:
  type: reverse
  tasks:
    a:
      action: std.echo output=1
      publish: {a: <% task().result %>}
    b:
      requires: [a]
      action: std.echo output=<% $.a + 1 %>
      publish: {b: <% task().result %>}
    other:
      action: std.fail
parent:
  tasks:
    call:
      workflow: child x=21
      publish: {got: <% task().result.doubled %>}
child:
  input: [x]
  output:
    doubled: <% $.x * 2 %>
  tasks:
    one:
      action: std.noop
parent_fail:
  tasks:
    call:
      workflow: child_fail
child_fail:
  tasks:
    boom:
      action: std.fail error_data="inner"
parent_ghost:
  tasks:
    call:
      workflow: ghost
items:
  tasks:
    each:
      with-items:
        - a in [1, 2]
        - b in <% ['x', 'y'] %>
      concurrency: 1
      action: std.echo output="<% $.a %>-<% $.b %>"
      publish: {r: <% task().result %>}
test_dict:
  tasks:
    t:
      action: std.test_dict size=2 key_prefix='k' val='v'
      publish: {d: <% task().result %>}
js:
  tasks:
    t:
      action: std.javascript
      input:
        script: return 6 * 7;
      publish: {answer: <% task().result %>}
keep:
  tasks:
    a:
      action: std.echo output=7
      keep-result: false
      publish: {v: <% task().result %>}
      on-success: b
    b:
      action: std.echo output=<% task(a).result %>
      publish: {later: <% task().result %>}
fail_on:
  tasks:
    t:
      action: std.echo output=5
      fail-on: <% task().result > 3 %>
waits:
  tasks:
    t:
      wait-before: 1
      action: std.echo output=5
      publish: {v: <% task().result %>}
retrying:
  tasks:
    t:
      action: std.fail
      retry: {count: 2, delay: 0}
async_wf:
  tasks:
    t:
      action: std.async_noop
      publish: {r: <% task().result %>}
loop3:
  input:
    - i: 0
  tasks:
    begin:
      on-success: inc
    inc:
      action: std.echo output=<% $.i + 1 %>
      publish: {i: <% task().result %>}
      on-success:
        - inc: <% $.i < 3 %>
on_complete_both:
  tasks:
    a:
      action: std.echo output=1
      on-complete: b
    b:
      publish: {done: true}
join_two_of_three:
  tasks:
    a:
      on-success: j
    b:
      on-success: j
    c:
      action: std.fail
      on-success: j
      on-error: noop
    j:
      join: 2
      publish: {joined: true}
global_on_error:
  tasks:
    t:
      action: std.fail error_data="bad"
      on-error:
        publish:
          global:
            why: <% task().result %>
        next: h
    h:
      action: std.echo output=<% global(why) %>
      publish: {seen: <% task().result %>}
items_fail:
  tasks:
    each:
      with-items: x in <% [1, 0, 2] %>
      action: std.echo output=<% 10 / $.x %>
items_error:
  tasks:
    each:
      with-items: x in <% [1, 2] %>
      action: std.fail
      on-error: h
    h:
      publish: {handled: true}
adhoc_use:
  tasks:
    t:
      action: greet name="Ann"
      publish: {text: <% task().result %>}
env_use:
  tasks:
    t:
      action: std.echo output=<% env().greeting %>
      publish: {g: <% task().result %>}
noop_only:
  tasks:
    t:
      action: std.noop
      publish: {r: <% task().result %>}
sleep_short:
  tasks:
    t:
      action: std.sleep seconds=1
      publish: {slept: true}
dynamic_action:
  input:
    - act: std.echo
  tasks:
    t:
      action: <% $.act %>
      input:
        output: dyn
      publish: {r: <% task().result %>}
dynamic_input_bad:
  tasks:
    t:
      action: std.echo
      input: <% [1, 2] %>
rev_chain:
  type: reverse
  tasks:
    a:
      publish: {a: 1}
    b:
      requires: a
      publish: {b: 2}
    c:
      requires: [a, b]
      action: std.echo output=<% $.a + $.b %>
      publish: {c: <% task().result %>}
nested_reverse_parent:
  tasks:
    call:
      workflow: rev_chain task_name="c"
      publish: {out: <% task().result %>}
succeed_early:
  tasks:
    a:
      publish: {x: 1}
      on-success:
        - succeed
        - b
    b:
      publish: {y: 2}
publish_branch_override:
  tasks:
    a:
      publish: {v: plain}
      on-success:
        publish:
          branch:
            v: clause
        next: b
    b:
      action: std.echo output=<% $.v %>
      publish: {seen: <% task().result %>}
pausing:
  tasks:
    a:
      on-success:
        - pause
        - b
    b:
      publish: {b: done}
`;

export const ADHOC = `
version: '2.0'
greet:
  base: std.echo
  base-input:
    output: "Hello, <% $.name %> from <% $.city %>!"
  input:
    - name
    - city: Paris
  output:
    text: <% $ %>
`;

export interface Scenario {
  name: string;
  workflow: string;
  input?: Record<string, unknown>;
  params?: Record<string, unknown>;
  state: string;
  output?: unknown;
  stateInfo?: string | RegExp | null;
  tasks?: Record<string, string>;
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'sequential publish and output',
    workflow: 'seq3',
    input: { n: 5 },
    state: 'SUCCESS',
    output: { total: 7 },
    tasks: { a: 'SUCCESS', b: 'SUCCESS', c: 'SUCCESS' },
  },
  { name: 'input defaults', workflow: 'seq3', state: 'SUCCESS', output: { total: 3 } },
  {
    name: 'example A data flow',
    workflow: 'sum_up',
    state: 'SUCCESS',
    output: { total: 6, names: ['a', 'b'] },
  },
  {
    name: 'example B on-error handles',
    workflow: 'guarded',
    state: 'SUCCESS',
    output: { why: 'failed', cleaned: true },
    tasks: { attempt: 'ERROR', cleanup: 'SUCCESS' },
  },
  {
    name: 'example B on-complete does not handle',
    workflow: 'guarded_complete',
    state: 'ERROR',
    stateInfo: /^Failure caused by error in tasks: attempt\n/,
  },
  { name: 'example C join all', workflow: 'fan_in', state: 'SUCCESS', output: { l: 1, r: 2, sum: 3 } },
  {
    name: 'example C failed join',
    workflow: 'fan_in_fail',
    state: 'ERROR',
    tasks: { left: 'SUCCESS', right: 'ERROR', j: 'ERROR' },
    stateInfo: /^Failure caused by error in tasks: j, right\n/,
  },
  {
    name: 'join 1 runs after the first arrival',
    workflow: 'join_one',
    state: 'SUCCESS',
    tasks: { a: 'SUCCESS', b: 'SUCCESS', j: 'SUCCESS' },
  },
  {
    name: 'example E fail with message',
    workflow: 'check',
    input: { n: 3 },
    state: 'ERROR',
    stateInfo: 'too big 3',
    output: { result: 'too big 3' },
  },
  { name: 'example E succeed', workflow: 'check', input: { n: 1 }, state: 'SUCCESS', stateInfo: null },
  {
    name: 'fail without message',
    workflow: 'fail_plain',
    state: 'ERROR',
    stateInfo: null,
    output: { result: null, extra: true },
  },
  {
    name: 'conditional branch left',
    workflow: 'branches',
    input: { x: 1 },
    state: 'SUCCESS',
    output: { went: 'left' },
  },
  {
    name: 'conditional branch right',
    workflow: 'branches',
    input: { x: 2 },
    state: 'SUCCESS',
    output: { went: 'right' },
  },
  { name: 'global publish and vars', workflow: 'globals', state: 'SUCCESS', output: { b: 2, seen: 11 } },
  { name: 'task-defaults on-error', workflow: 'defaults', state: 'SUCCESS', output: { handled: true } },
  {
    name: 'unknown action is fatal',
    workflow: 'unknown_action',
    state: 'ERROR',
    stateInfo:
      'Failed to run task [error=Failed to find action [action_name=nope.nope, namespace=], wf=unknown_action, task=t]',
  },
  {
    name: 'expression error is fatal',
    workflow: 'bad_expression',
    state: 'ERROR',
    stateInfo: /^Failed to run task \[error=Can not evaluate YAQL expression \[expression=\$\.missing/,
  },
  {
    name: 'reverse workflow target',
    workflow: 'rev',
    params: { task_name: 'b' },
    state: 'SUCCESS',
    output: { a: 1, b: 2 },
    tasks: { a: 'SUCCESS', b: 'SUCCESS' },
  },
  { name: 'nested workflow output', workflow: 'parent', state: 'SUCCESS', output: { got: 42 } },
  {
    name: 'nested workflow failure',
    workflow: 'parent_fail',
    state: 'ERROR',
    stateInfo:
      /^Failure caused by error in tasks: call\n\n {2}call \[task_ex_id=[^\]]+\] -> Failure caused by error in tasks: boom/,
  },
  {
    name: 'unknown sub-workflow',
    workflow: 'parent_ghost',
    state: 'ERROR',
    stateInfo:
      'Failed to run task [error=Failed to find workflow [name=ghost] [namespace=], wf=parent_ghost, task=call]',
  },
  { name: 'with-items example D', workflow: 'items', state: 'SUCCESS', output: { r: ['1-x', '2-y'] } },
  { name: 'std.test_dict', workflow: 'test_dict', state: 'SUCCESS', output: { d: { k0: 'v', k1: 'v' } } },
  { name: 'std.javascript', workflow: 'js', state: 'SUCCESS', output: { answer: 42 } },
  { name: 'keep-result false', workflow: 'keep', state: 'SUCCESS', output: { v: 7, later: null } },
  { name: 'fail-on', workflow: 'fail_on', state: 'ERROR', stateInfo: /-> Failed by 'fail-on' policy\n$/ },
  { name: 'wait-before', workflow: 'waits', state: 'SUCCESS', output: { v: 5 } },
  { name: 'retry then fail', workflow: 'retrying', state: 'ERROR', tasks: { t: 'ERROR' } },
  { name: 'a loop creates a task execution per pass', workflow: 'loop3', state: 'SUCCESS', output: { i: 3 } },
  {
    name: 'on-complete after success',
    workflow: 'on_complete_both',
    state: 'SUCCESS',
    output: { done: true },
  },
  {
    name: 'join 2 of 3 with one dead branch',
    workflow: 'join_two_of_three',
    state: 'SUCCESS',
    output: { joined: true },
  },
  { name: 'global publish on error', workflow: 'global_on_error', state: 'SUCCESS', output: { seen: 'bad' } },
  {
    name: 'with-items item expression error is fatal',
    workflow: 'items_fail',
    state: 'ERROR',
    stateInfo: /^Failed to run task \[error=Can not evaluate YAQL expression/,
  },
  {
    name: 'with-items failed items are handled by on-error',
    workflow: 'items_error',
    state: 'SUCCESS',
    output: { handled: true },
  },
  {
    name: 'ad-hoc action with input defaults and output',
    workflow: 'adhoc_use',
    state: 'SUCCESS',
    output: { text: { text: 'Hello, Ann from Paris!' } },
  },
  {
    name: 'env from params',
    workflow: 'env_use',
    params: { env: { greeting: 'hi' } },
    state: 'SUCCESS',
    output: { g: 'hi' },
  },
  { name: 'std.noop result is null', workflow: 'noop_only', state: 'SUCCESS', output: { r: null } },
  { name: 'std.sleep', workflow: 'sleep_short', state: 'SUCCESS', output: { slept: true } },
  {
    name: 'action name from an expression',
    workflow: 'dynamic_action',
    state: 'SUCCESS',
    output: { r: 'dyn' },
  },
  {
    name: 'dynamic input that is not a dict is fatal',
    workflow: 'dynamic_input_bad',
    state: 'ERROR',
    stateInfo: /^Failed to run task \[error=Wrong dynamic input for task: t\. Dict type is expected\./,
  },
  {
    name: 'reverse chain with two prerequisites',
    workflow: 'rev_chain',
    params: { task_name: 'c' },
    state: 'SUCCESS',
    output: { a: 1, b: 2, c: 3 },
  },
  {
    name: 'nested reverse workflow with task_name from the task input',
    workflow: 'nested_reverse_parent',
    state: 'SUCCESS',
    output: { out: { a: 1, b: 2, c: 3 } },
  },
  {
    name: 'succeed command first ends the execution',
    workflow: 'succeed_early',
    state: 'SUCCESS',
    output: { x: 1 },
    tasks: { a: 'SUCCESS' },
  },
  // Observed on the real Mistral 15: the plain publish wins over the on-success clause's.
  {
    name: 'the plain publish wins over the clause publish (as Mistral 15)',
    workflow: 'publish_branch_override',
    state: 'SUCCESS',
    output: { v: 'plain', seen: 'plain' },
  },
];
