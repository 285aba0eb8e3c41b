import { parseWorkflows } from '../dsl/documents';
import type { WorkflowSpec } from '../dsl/model';
import { EngineSimulator, type ActionScript, defaultActionScript } from './simulator';
import { CONTROL_REQUEST, decide, decideBatch } from './decide';
import type { EngineEffect, EngineEvent } from './model';
import { ITEMS_STARTED_PER_DECISION } from './with-items';

const catalog = (yaml: string): Record<string, WorkflowSpec> =>
  Object.fromEntries(parseWorkflows(yaml).workflows.map((w) => [w.name, w]));

interface Scenario {
  name: string;
  yaml: string;
  workflow?: string;
  input?: Record<string, unknown>;
  params?: Record<string, unknown>;
  script?: ActionScript;
  state: string;
  output?: unknown;
  stateInfo?: string | RegExp | null;
  tasks?: Record<string, string>;
  published?: Record<string, Record<string, unknown>>;
  published_global?: Record<string, unknown>;
}

const run = (s: Scenario, partial = false) => {
  const cat = catalog(s.yaml);
  const sim = new EngineSimulator(cat, s.script ?? defaultActionScript);
  sim.partialSnapshots = partial;
  const id = sim.create(s.workflow ?? Object.keys(cat)[0]!, s.input ?? {}, s.params ?? {});
  sim.runWithTimers();
  return { sim, id };
};

const scenarios: Scenario[] = [
  {
    name: 'sequential tasks succeed; output from the final context',
    yaml: `
version: '2.0'
wf:
  tasks:
    a:
      action: std.echo output=1
      publish: {x: <% task().result %>}
      on-success: b
    b:
      action: std.echo output=<% $.x + 1 %>
      publish: {y: <% task().result %>}
`,
    state: 'SUCCESS',
    output: { x: 1, y: 2 },
    tasks: { a: 'SUCCESS', b: 'SUCCESS' },
  },
  {
    name: 'example A: workflow output expressions see input and published values',
    yaml: `
version: '2.0'
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
`,
    state: 'SUCCESS',
    output: { total: 6, names: ['a', 'b'] },
  },
  {
    name: 'example B: on-error handles the failure',
    yaml: `
version: '2.0'
guarded:
  tasks:
    attempt:
      action: std.fail
      publish-on-error:
        why: <% task().state_info %>
      on-error: cleanup
    cleanup:
      action: std.noop
`,
    state: 'SUCCESS',
    tasks: { attempt: 'ERROR', cleanup: 'SUCCESS' },
    published: { attempt: { why: 'Fail action expected exception.' } },
  },
  {
    name: 'example B variant: on-complete does not handle the error',
    yaml: `
version: '2.0'
guarded:
  tasks:
    attempt:
      action: std.fail
      on-complete: cleanup
    cleanup:
      action: std.noop
`,
    state: 'ERROR',
    stateInfo:
      /^Failure caused by error in tasks: attempt\n\n {2}attempt \[task_ex_id=[0-9a-f-]+\] -> Fail action expected exception.\n {4}\[action_ex_id=[0-9a-f-]+, idx=0\]: Fail action expected exception.\n$/,
    tasks: { attempt: 'ERROR', cleanup: 'SUCCESS' },
  },
  {
    name: 'unhandled error fails the workflow; output-on-error is merged',
    yaml: `
version: '2.0'
wf:
  output-on-error:
    reason: failed
  tasks:
    t:
      action: std.fail error_data="boom"
`,
    state: 'ERROR',
    output: { result: expect.stringMatching(/^Failure caused by error in tasks: t\n/), reason: 'failed' },
  },
  {
    name: 'example C: join all runs once both branches arrive',
    yaml: `
version: '2.0'
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
`,
    state: 'SUCCESS',
    tasks: { left: 'SUCCESS', right: 'SUCCESS', j: 'SUCCESS' },
    output: { l: 1, r: 2, sum: 3 },
  },
  {
    name: 'example C: join fails when an inbound branch fails',
    yaml: `
version: '2.0'
fan_in:
  tasks:
    left:
      on-success: j
    right:
      action: std.fail
      on-success: j
    j:
      join: all
`,
    state: 'ERROR',
    tasks: { left: 'SUCCESS', right: 'ERROR', j: 'ERROR' },
    stateInfo: /Failure caused by error in tasks: j, right\n/,
  },
  {
    name: 'join 1 runs after the first arrival',
    yaml: `
version: '2.0'
wf:
  tasks:
    a:
      on-success: j
    b:
      action: std.fail
      on-error: j
    c:
      action: std.fail
    j:
      join: 1
`,
    state: 'ERROR',
    tasks: { a: 'SUCCESS', b: 'ERROR', c: 'ERROR', j: 'SUCCESS' },
    stateInfo: /^Failure caused by error in tasks: c\n/,
  },
  {
    name: 'example E: fail command with a message when n is big',
    yaml: `
version: '2.0'
check:
  input: [n]
  tasks:
    t:
      on-success:
        - fail(msg="too big <% $.n %>"): <% $.n > 2 %>
        - succeed
`,
    input: { n: 3 },
    state: 'ERROR',
    stateInfo: 'too big 3',
    output: { result: 'too big 3' },
  },
  {
    name: 'example E: succeed command when n is small',
    yaml: `
version: '2.0'
check:
  input: [n]
  tasks:
    t:
      on-success:
        - fail(msg="too big <% $.n %>"): <% $.n > 2 %>
        - succeed
`,
    input: { n: 1 },
    state: 'SUCCESS',
    stateInfo: null,
  },
  {
    name: 'fail without message: state_info null, output result null',
    yaml: `
version: '2.0'
wf:
  tasks:
    t:
      on-success: fail
`,
    state: 'ERROR',
    stateInfo: null,
    output: { result: null },
  },
  {
    name: 'conditions pick the branch; on-error noop swallows the error',
    yaml: `
version: '2.0'
wf:
  input: [x]
  tasks:
    t:
      action: std.fail
      on-error:
        - noop
    u:
      on-success:
        - left: <% $.x = 1 %>
        - right: <% $.x != 1 %>
    left:
      publish: {went: left}
    right:
      publish: {went: right}
`,
    input: { x: 1 },
    state: 'SUCCESS',
    tasks: { t: 'ERROR', u: 'SUCCESS', left: 'SUCCESS' },
    output: { went: 'left' },
  },
  {
    name: 'global publish is visible to other branches and in published_global',
    yaml: `
version: '2.0'
wf:
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
`,
    state: 'SUCCESS',
    output: { b: 2, seen: 11 },
    published_global: { g: 11 },
  },
  {
    name: 'task-defaults on-error applies to every task',
    yaml: `
version: '2.0'
wf:
  task-defaults:
    on-error: handler
  tasks:
    t:
      action: std.fail
    handler:
      publish: {handled: true}
`,
    state: 'SUCCESS',
    output: { handled: true },
  },
  {
    name: 'unknown action fails the task and the execution at once',
    yaml: `
version: '2.0'
wf:
  tasks:
    t:
      action: nope.nope
      on-error: h
    h: {action: std.noop}
`,
    state: 'ERROR',
    stateInfo:
      'Failed to run task [error=Failed to find action [action_name=nope.nope, namespace=], wf=wf, task=t]',
    tasks: { t: 'ERROR' },
  },
  {
    name: 'expression error in input is fatal',
    yaml: `
version: '2.0'
wf:
  tasks:
    t:
      action: std.echo output=<% $.missing %>
      on-error: h
    h: {action: std.noop}
`,
    state: 'ERROR',
    stateInfo:
      /^Failed to run task \[error=Can not evaluate YAQL expression \[expression=\$\.missing, error=.*\], wf=wf, task=t\]$/,
  },
  {
    name: 'reverse workflow runs the target and its prerequisites only',
    yaml: `
version: '2.0'
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
    c:
      requires: b
      publish: {c: 3}
    other:
      action: std.fail
`,
    params: { task_name: 'b' },
    state: 'SUCCESS',
    tasks: { a: 'SUCCESS', b: 'SUCCESS' },
    output: { a: 1, b: 2 },
  },
  {
    name: 'reverse workflow with a failing prerequisite fails',
    yaml: `
version: '2.0'
rev:
  type: reverse
  tasks:
    a:
      action: std.fail
    b:
      requires: [a]
`,
    params: { task_name: 'b' },
    state: 'ERROR',
    tasks: { a: 'ERROR' },
    stateInfo: /^Failure caused by error in tasks: a\n/,
  },
  {
    name: 'nested workflow: the parent task gets the child output',
    yaml: `
version: '2.0'
parent:
  tasks:
    call:
      workflow: child x=2
      publish: {got: <% task().result.doubled %>}
child:
  input: [x]
  output:
    doubled: <% $.x * 2 %>
  tasks:
    n: {action: std.noop}
`,
    workflow: 'parent',
    state: 'SUCCESS',
    output: { got: 4 },
  },
  {
    name: 'nested workflow failure fails the parent task',
    yaml: `
version: '2.0'
parent:
  tasks:
    call:
      workflow: child
child:
  tasks:
    boom:
      action: std.fail
`,
    workflow: 'parent',
    state: 'ERROR',
    stateInfo:
      /^Failure caused by error in tasks: call\n\n {2}call \[task_ex_id=[^\]]+\] -> Failure caused by error in tasks: boom/,
  },
  {
    name: 'unknown sub-workflow is fatal',
    yaml: `
version: '2.0'
parent:
  tasks:
    call:
      workflow: ghost
`,
    workflow: 'parent',
    state: 'ERROR',
    stateInfo:
      'Failed to run task [error=Failed to find workflow [name=ghost] [namespace=], wf=parent, task=call]',
  },
  {
    name: 'with-items collects item results in order (example D)',
    yaml: `
version: '2.0'
pairs:
  tasks:
    each:
      with-items:
        - a in [1, 2]
        - b in <% ['x', 'y'] %>
      concurrency: 1
      action: std.echo output="<% $.a %>-<% $.b %>"
      publish: {r: <% task().result %>}
`,
    state: 'SUCCESS',
    output: { r: ['1-x', '2-y'] },
  },
  {
    name: 'with-items over an empty list succeeds with []',
    yaml: `
version: '2.0'
wf:
  tasks:
    each:
      with-items: x in <% [] %>
      action: std.echo output=<% $.x %>
      publish: {r: <% task().result %>}
`,
    state: 'SUCCESS',
    output: { r: [] },
  },
  {
    name: 'retry runs a failing task count+1 times then fails',
    yaml: `
version: '2.0'
wf:
  tasks:
    t:
      action: std.fail
      retry: {count: 2, delay: 1}
`,
    state: 'ERROR',
    tasks: { t: 'ERROR' },
  },
  {
    name: 'wait-before and wait-after delay a task but it still succeeds',
    yaml: `
version: '2.0'
wf:
  tasks:
    t:
      wait-before: 2
      wait-after: 1
      action: std.echo output=5
      publish: {v: <% task().result %>}
`,
    state: 'SUCCESS',
    output: { v: 5 },
  },
  {
    name: 'fail-on turns a success into an error',
    yaml: `
version: '2.0'
wf:
  tasks:
    t:
      action: std.echo output=5
      fail-on: <% task().result > 3 %>
`,
    state: 'ERROR',
    stateInfo:
      /^Failure caused by error in tasks: t\n\n {2}t \[task_ex_id=[^\]]+\] -> Failed by 'fail-on' policy\n$/,
  },
  {
    name: 'keep-result false: publish sees the result, task().result is null later',
    yaml: `
version: '2.0'
wf:
  tasks:
    a:
      action: std.echo output=7
      keep-result: false
      publish: {v: <% task().result %>}
      on-success: b
    b:
      action: std.echo output=<% task(a).result %>
      publish: {later: <% task().result %>}
`,
    state: 'SUCCESS',
    output: { v: 7, later: null },
  },
];

describe.each([
  ['full', false],
  ['partial', true],
])('decide: workflow scenarios (%s snapshots)', (_mode, partial) => {
  it.each(scenarios.map((s) => [s.name, s] as const))('%s', (_name, s) => {
    const { sim, id } = run(s, partial);
    const ex = sim.execution(id);
    expect(ex.state).toBe(s.state);
    if (s.output !== undefined) expect(ex.output).toEqual(s.output);
    if (s.stateInfo !== undefined) {
      if (s.stateInfo instanceof RegExp) expect(ex.stateInfo).toMatch(s.stateInfo);
      else expect(ex.stateInfo).toBe(s.stateInfo);
    }
    if (s.tasks) expect(sim.taskStates(id)).toEqual(s.tasks);
    if (s.published) {
      for (const [task, pub] of Object.entries(s.published)) {
        expect(sim.tasksOf(id).find((t) => t.name === task)?.published).toEqual(pub);
      }
    }
    if (s.published_global) {
      const g = Object.fromEntries(
        Object.entries(ex.context).filter(([k]) => !k.startsWith('__') && !ex.varNames.includes(k)),
      );
      expect(g).toEqual(s.published_global);
    }
  });
});

describe('decide: event details', () => {
  const seq = catalog(`
version: '2.0'
wf:
  tasks:
    a:
      action: std.async_noop
      on-success: b
    b: {action: std.noop}
`);

  it('start creates the start task and a run-action command, once', () => {
    const sim = new EngineSimulator(seq);
    const id = sim.create('wf');
    const d = sim.send(id, { type: 'start' });
    expect(d.changes.tasksCreated.map((t) => [t.name, t.state])).toEqual([['a', 'RUNNING']]);
    expect(d.commands.map((c) => c.type)).toEqual(['run-action']);
    const again = decide(sim.snapshot(id), { type: 'start' }, sim.now, sim.newId);
    expect(again.commands).toEqual([]);
    expect(again.changes.tasksCreated).toEqual([]);
    expect(again.changes.execution).toBeUndefined();
  });

  it('a change inside the execution context alone is written (a global publish)', () => {
    const sim = new EngineSimulator(
      catalog(`
version: '2.0'
wf:
  tasks:
    a:
      action: std.async_noop
      on-success:
        publish:
          global: {g: 1}
        next: b
    b: {action: std.async_noop}
`),
    );
    const id = sim.create('wf');
    sim.send(id, { type: 'start' });
    const a = sim.snapshot(id).actions[0]!;
    const ev = {
      type: 'action-completed',
      taskExecutionId: a.taskExecutionId,
      actionExecutionId: a.id,
      state: 'SUCCESS',
      result: null,
    } as const;
    const d = decide(sim.snapshot(id), ev, sim.now, sim.newId);
    expect(sim.snapshot(id).execution.state).toBe('RUNNING');
    expect(d.changes.execution?.state).toBe('RUNNING');
    expect(d.changes.execution?.context).toMatchObject({ g: 1 });
    expect(sim.snapshot(id).execution.context).not.toHaveProperty('g');
  });

  it('a duplicate action-completed is ignored', () => {
    const sim = new EngineSimulator(seq);
    const id = sim.create('wf');
    sim.run();
    const [a] = sim.asyncActions;
    const ev = {
      type: 'action-completed',
      taskExecutionId: a!.taskExecutionId,
      actionExecutionId: a!.actionExecutionId,
      state: 'SUCCESS',
      result: 1,
    } as const;
    const first = sim.send(id, ev);
    expect(first.changes.tasksCreated.map((t) => t.name)).toEqual(['b']);
    const second = decide(sim.snapshot(id), ev, sim.now, sim.newId);
    expect(second.changes.tasksCreated).toEqual([]);
    expect(second.changes.tasksUpdated).toEqual([]);
    expect(second.commands).toEqual([]);
  });

  it('pause defers routing of a completed task until resume', () => {
    const sim = new EngineSimulator(seq);
    const id = sim.create('wf');
    sim.run();
    sim.send(id, { type: 'pause' });
    expect(sim.execution(id).state).toBe('PAUSED');
    const [a] = sim.asyncActions;
    sim.send(id, {
      type: 'action-completed',
      taskExecutionId: a!.taskExecutionId,
      actionExecutionId: a!.actionExecutionId,
      state: 'SUCCESS',
      result: null,
    });
    expect(sim.taskStates(id)).toEqual({ a: 'SUCCESS' });
    expect(sim.tasksOf(id)[0]!.processed).toBe(false);
    sim.queue.push({ executionId: id, event: { type: 'resume' } });
    sim.run();
    expect(sim.taskStates(id)).toEqual({ a: 'SUCCESS', b: 'SUCCESS' });
    expect(sim.execution(id).state).toBe('SUCCESS');
  });

  it('cancel ends the execution with the message as output', () => {
    const sim = new EngineSimulator(seq);
    const id = sim.create('wf');
    sim.run();
    sim.send(id, { type: 'cancel', message: 'stop' });
    expect(sim.execution(id)).toMatchObject({
      state: 'CANCELLED',
      stateInfo: 'stop',
      output: { result: 'stop' },
    });
  });

  it('force ERROR keeps the message as state_info; a later result does not route', () => {
    const sim = new EngineSimulator(seq);
    const id = sim.create('wf');
    sim.run();
    sim.send(id, { type: 'force-state', state: 'ERROR', message: 'by hand' });
    const [a] = sim.asyncActions;
    sim.send(id, {
      type: 'action-completed',
      taskExecutionId: a!.taskExecutionId,
      actionExecutionId: a!.actionExecutionId,
      state: 'SUCCESS',
      result: null,
    });
    expect(sim.execution(id)).toMatchObject({ state: 'ERROR', stateInfo: 'by hand' });
    expect(sim.taskStates(id)).toEqual({ a: 'SUCCESS' });
  });

  it('the reconciler fails a stuck task and its execution (DSL-13.6), unless the task changed since it looked', () => {
    const sim = new EngineSimulator(seq);
    const id = sim.create('wf');
    sim.run();
    const [task] = sim.tasksOf(id);
    const seen = (task!.updatedAt ?? task!.createdAt).toISOString();
    const message = 'reconciler: task a was RUNNING with no action, timer or pending command for 301 s';
    sim.send(id, {
      type: 'force-state',
      state: 'ERROR',
      message,
      taskExecutionId: task!.id,
      taskUpdatedAt: '2000-01-01T00:00:00.000Z',
    });
    expect(sim.execution(id).state).toBe('RUNNING');
    expect(sim.taskStates(id)).toEqual({ a: 'RUNNING' });
    sim.send(id, {
      type: 'force-state',
      state: 'ERROR',
      message,
      taskExecutionId: task!.id,
      taskUpdatedAt: seen,
    });
    expect(sim.execution(id)).toMatchObject({ state: 'ERROR', stateInfo: message });
    expect(sim.tasksOf(id)[0]).toMatchObject({ state: 'ERROR', stateInfo: message });
  });

  it('a task event carries the task times of its moment, even when one decision takes the task further', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    t:
      action: std.echo output=1
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('wf', {}, { notify: [{ type: 'noop' }] });
    let n = 0;
    const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    const first = decide(sim.snapshot(id), { type: 'start' }, new Date('2026-01-01T00:00:00Z'), newId);
    const run = first.commands.find((c) => c.type === 'run-action')!;
    if (run.type !== 'run-action') throw new Error('no run-action');
    n = 0;
    const at = new Date('2026-01-01T00:00:05Z');
    const both = decideBatch(
      sim.snapshot(id),
      [
        { type: 'start' },
        {
          type: 'action-completed',
          taskExecutionId: run.taskExecutionId,
          actionExecutionId: run.actionExecutionId,
          state: 'SUCCESS',
          result: 1,
        },
      ],
      at,
      newId,
    );
    const events = both.commands.flatMap((c) =>
      c.type === 'notify' && c.taskExecutionId ? [[c.event, c.state, c.startedAt, c.finishedAt]] : [],
    );
    expect(events).toEqual([
      ['TASK_LAUNCHED', 'RUNNING', at, null],
      ['TASK_SUCCEEDED', 'SUCCESS', at, at],
    ]);
  });

  it('a rerun or skip command releases the API claim on the task, applied or not', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    t:
      action: std.fail
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('wf');
    sim.run();
    const t = sim.tasksOf(id)[0]!;
    const claimed = {
      ...sim.snapshot(id),
      tasks: [{ ...t, runtimeContext: { ...t.runtimeContext, [CONTROL_REQUEST]: 'c1' } }],
    };
    const rerun = decide(
      claimed,
      { type: 'rerun-task', taskExecutionId: t.id, reset: true },
      new Date(),
      () => 'n',
    );
    expect(rerun.changes.tasksUpdated[0]!.state).toBe('RUNNING');
    expect(rerun.changes.tasksUpdated[0]!.runtimeContext[CONTROL_REQUEST]).toBeUndefined();
    // a skip that is no longer applicable (the task is RUNNING) still releases the claim
    const running = { ...claimed, tasks: [{ ...claimed.tasks[0]!, state: 'RUNNING' as const }] };
    const skip = decide(running, { type: 'skip-task', taskExecutionId: t.id }, new Date(), () => 'n');
    expect(skip.changes.tasksUpdated.map((x) => [x.state, x.runtimeContext[CONTROL_REQUEST]])).toEqual([
      ['RUNNING', undefined],
    ]);
    expect(skip.commands).toEqual([]);
  });

  it('skip of a failed prerequisite of a reverse workflow runs the target', () => {
    const cat = catalog(`
version: '2.0'
rev:
  type: reverse
  tasks:
    prep:
      action: std.fail
      publish-on-skip: {p: skipped}
    target:
      requires: [prep]
      action: std.echo output=<% $.p %>
      publish: {r: <% task().result %>}
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('rev', {}, { task_name: 'target' });
    sim.run();
    expect(sim.execution(id).state).toBe('ERROR');
    sim.queue.push({
      executionId: id,
      event: { type: 'skip-task', taskExecutionId: sim.tasksOf(id)[0]!.id },
    });
    sim.run();
    expect(sim.taskStates(id)).toEqual({ prep: 'SKIPPED', target: 'SUCCESS' });
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { p: 'skipped', r: 'skipped' } });
  });

  it('rerun of a failed task runs it again and the execution can succeed', () => {
    let fail = true;
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    t:
      action: std.echo output=1
      on-success: u
    u: {action: std.noop}
`);
    const sim = new EngineSimulator(cat, (name, input) =>
      fail ? { state: 'ERROR', error: 'nope' } : defaultActionScript(name, input),
    );
    const id = sim.create('wf');
    sim.run();
    expect(sim.execution(id).state).toBe('ERROR');
    fail = false;
    const t = sim.tasksOf(id)[0]!;
    sim.queue.push({ executionId: id, event: { type: 'rerun-task', taskExecutionId: t.id, reset: true } });
    sim.run();
    expect(sim.execution(id).state).toBe('SUCCESS');
    expect(sim.taskStates(id)).toEqual({ t: 'SUCCESS', u: 'SUCCESS' });
    expect(sim.actionsOf(id).map((a) => [a.state, a.accepted])).toEqual([
      ['ERROR', false],
      ['SUCCESS', true],
      ['SUCCESS', true],
    ]);
  });

  it('a rerun request delivered twice reruns the task once (the claim is the request)', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    t: {action: std.fail}
`);
    const sim = new EngineSimulator(cat, defaultActionScript);
    const id = sim.create('wf');
    sim.run();
    expect(sim.execution(id).state).toBe('ERROR');
    const t = sim.tasksOf(id)[0]!;
    // the API's claim, as PUT /v2/tasks/{id} sets it
    t.runtimeContext[CONTROL_REQUEST] = 'rerun:1';
    const rerun = { type: 'rerun-task', taskExecutionId: t.id, reset: true, requestId: 'rerun:1' } as const;
    sim.queue.push({ executionId: id, event: rerun });
    sim.run();
    // the task ran again, failed again, and the claim is released
    expect(sim.execution(id).state).toBe('ERROR');
    expect(sim.actionsOf(id)).toHaveLength(2);
    expect(CONTROL_REQUEST in sim.tasksOf(id)[0]!.runtimeContext).toBe(false);
    // the same command redelivered: nothing happens
    sim.queue.push({ executionId: id, event: rerun });
    sim.run();
    expect(sim.actionsOf(id)).toHaveLength(2);
    expect(sim.execution(id).state).toBe('ERROR');
    // nor does a skip whose claim is not the task's
    sim.queue.push({
      executionId: id,
      event: { type: 'skip-task', taskExecutionId: t.id, requestId: 'skip:2' },
    });
    sim.run();
    expect(sim.taskStates(id)).toEqual({ t: 'ERROR' });
  });

  it('skip of a failed task routes on-success and succeeds the execution', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    t:
      action: std.fail
      publish-on-skip: {skipped: yes}
      on-success: u
    u: {action: std.noop}
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('wf');
    sim.run();
    expect(sim.execution(id).state).toBe('ERROR');
    sim.queue.push({
      executionId: id,
      event: { type: 'skip-task', taskExecutionId: sim.tasksOf(id)[0]!.id },
    });
    sim.run();
    expect(sim.taskStates(id)).toEqual({ t: 'SKIPPED', u: 'SUCCESS' });
    expect(sim.tasksOf(id)[0]).toMatchObject({
      stateInfo: 'Task was skipped.',
      published: { skipped: true },
    });
    expect(sim.execution(id).state).toBe('SUCCESS');
  });

  it('join 1 runs once even when the second inbound task arrives later', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    a:
      on-success: j
    b:
      action: std.async_noop
      on-success: j
    j:
      join: 1
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('wf');
    sim.run();
    const [b] = sim.asyncActions;
    sim.send(id, {
      type: 'action-completed',
      taskExecutionId: b!.taskExecutionId,
      actionExecutionId: b!.actionExecutionId,
      state: 'SUCCESS',
    });
    sim.run();
    expect(sim.tasksOf(id).filter((t) => t.name === 'j')).toHaveLength(1);
    expect(sim.execution(id).state).toBe('SUCCESS');
  });

  it('a join waits in WAITING with the names it is blocked by', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    a:
      on-success: j
    b:
      action: std.async_noop
      on-success: j
    j:
      join: all
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('wf');
    sim.run();
    const j = sim.tasksOf(id).find((t) => t.name === 'j')!;
    expect(j).toMatchObject({ state: 'WAITING', stateInfo: "Blocked by tasks: ['b']" });
  });

  it('a timeout fails a task whose action never answers, and the late result is ignored', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    t:
      action: std.async_noop
      timeout: 3
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('wf');
    sim.runWithTimers();
    expect(sim.tasksOf(id)[0]).toMatchObject({ state: 'ERROR', stateInfo: 'Task timed out [timeout(s)=3].' });
    expect(sim.execution(id).state).toBe('ERROR');
  });

  it('pause-before keeps the task IDLE and pauses; resume runs it', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    t:
      pause-before: true
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('wf');
    sim.run();
    expect(sim.execution(id).state).toBe('PAUSED');
    expect(sim.tasksOf(id)[0]).toMatchObject({ state: 'IDLE', stateInfo: "Set by 'pause-before' policy" });
    sim.queue.push({ executionId: id, event: { type: 'resume' } });
    sim.run();
    expect(sim.execution(id).state).toBe('SUCCESS');
  });

  it('retry with continue-on repeats a successful task while the condition holds', () => {
    let n = 0;
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    t:
      action: std.echo
      retry:
        count: 5
        delay: 0
        continue-on: <% task().result < 3 %>
      publish: {last: <% task().result %>}
`);
    const sim = new EngineSimulator(cat, () => ({ state: 'SUCCESS', result: ++n }));
    const id = sim.create('wf');
    sim.runWithTimers();
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { last: 3 } });
    expect(sim.tasksOf(id)[0]!.runtimeContext['retry_task_policy']).toEqual({ retry_no: 2 });
  });

  it('pause and cancel propagate to a running sub-execution', () => {
    const cat = catalog(`
version: '2.0'
parent:
  tasks:
    call:
      workflow: child
child:
  tasks:
    wait:
      action: std.async_noop
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('parent');
    sim.run();
    const childId = [...sim.executions.keys()].find((k) => k !== id)!;
    sim.queue.push({ executionId: id, event: { type: 'pause' } });
    sim.run();
    expect([sim.execution(id).state, sim.execution(childId).state]).toEqual(['PAUSED', 'PAUSED']);
    sim.queue.push({ executionId: id, event: { type: 'resume' } });
    sim.run();
    expect([sim.execution(id).state, sim.execution(childId).state]).toEqual(['RUNNING', 'RUNNING']);
    sim.queue.push({ executionId: id, event: { type: 'cancel', message: 'stop' } });
    sim.run();
    expect(sim.execution(childId)).toMatchObject({ state: 'CANCELLED', stateInfo: 'stop' });
    expect(sim.execution(id)).toMatchObject({ state: 'CANCELLED', output: { result: 'stop' } });
  });

  it('pause and resume of a sub-execution cascade up to its ancestors, once', () => {
    const cat = catalog(`
version: '2.0'
top:
  tasks:
    call:
      workflow: parent
parent:
  tasks:
    call:
      workflow: child
child:
  tasks:
    wait:
      action: std.async_noop
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('top');
    sim.run();
    const ids = [...sim.executions.keys()];
    const leaf = ids.find((k) => sim.execution(k).workflowName === 'child')!;
    sim.queue.push({ executionId: leaf, event: { type: 'pause' } });
    sim.run();
    expect(ids.map((k) => sim.execution(k).state)).toEqual(['PAUSED', 'PAUSED', 'PAUSED']);
    const pausedTwice = decide(sim.snapshot(id), { type: 'pause' }, new Date(), () => 'x');
    expect(pausedTwice.commands).toEqual([]);
    sim.queue.push({ executionId: leaf, event: { type: 'resume' } });
    sim.run();
    expect(ids.map((k) => sim.execution(k).state)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);
    expect(sim.execution(id).state).toBe('RUNNING');
  });

  it('a paused sub-execution pauses its parent task; the parent resumes once no task is PAUSED (Mistral)', () => {
    const cat = catalog(`
version: '2.0'
top:
  tasks:
    one:
      workflow: child
      on-success: j
    two:
      workflow: child
      on-success: j
    j:
      join: all
child:
  tasks:
    wait:
      action: std.async_noop
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('top');
    sim.run();
    const subOf = (task: string) =>
      sim.tasksOf(id).find((t) => t.name === task)!.runtimeContext['sub_executions'] as { id: string }[];
    const first = subOf('one')[0]!.id;
    const second = subOf('two')[0]!.id;
    sim.queue.push({ executionId: first, event: { type: 'pause' } });
    sim.run();
    // the parent task of the paused child is PAUSED, the parent pauses and so does the sibling
    expect(sim.taskStates(id)).toEqual({ one: 'PAUSED', two: 'PAUSED' });
    expect([sim.execution(id).state, sim.execution(first).state, sim.execution(second).state]).toEqual([
      'PAUSED',
      'PAUSED',
      'PAUSED',
    ]);
    // resuming one child resumes its task only: the sibling's task is still PAUSED, so is the parent
    sim.queue.push({ executionId: first, event: { type: 'resume' } });
    sim.run();
    expect(sim.taskStates(id)).toEqual({ one: 'RUNNING', two: 'PAUSED' });
    expect([sim.execution(id).state, sim.execution(first).state, sim.execution(second).state]).toEqual([
      'PAUSED',
      'RUNNING',
      'PAUSED',
    ]);
    // the first child finishing while the parent is paused is recorded, its routing waits
    const action = sim.asyncActions.find((a) => a.executionId === first)!;
    sim.queue.push({
      executionId: first,
      event: {
        type: 'action-completed',
        taskExecutionId: action.taskExecutionId,
        actionExecutionId: action.actionExecutionId,
        state: 'SUCCESS',
        result: 1,
      },
    });
    sim.run();
    expect(sim.taskStates(id)).toEqual({ one: 'SUCCESS', two: 'PAUSED' });
    expect(sim.execution(id).state).toBe('PAUSED');
    sim.queue.push({ executionId: second, event: { type: 'resume' } });
    sim.run();
    expect(sim.execution(id).state).toBe('RUNNING');
    expect(sim.taskStates(id)).toEqual({ one: 'SUCCESS', two: 'RUNNING', j: 'WAITING' });
    const other = sim.asyncActions.find((a) => a.executionId === second)!;
    sim.queue.push({
      executionId: second,
      event: {
        type: 'action-completed',
        taskExecutionId: other.taskExecutionId,
        actionExecutionId: other.actionExecutionId,
        state: 'SUCCESS',
        result: 2,
      },
    });
    sim.run();
    expect(sim.execution(id).state).toBe('SUCCESS');
  });

  it('pausing the root marks its running WORKFLOW tasks PAUSED; a cancelled paused child still reaches its task', () => {
    const cat = catalog(`
version: '2.0'
top:
  tasks:
    call:
      workflow: child
child:
  tasks:
    wait:
      action: std.async_noop
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('top');
    sim.run();
    const child = [...sim.executions.keys()].find((k) => k !== id)!;
    sim.queue.push({ executionId: id, event: { type: 'pause' } });
    sim.run();
    expect(sim.tasksOf(id)[0]!.state).toBe('PAUSED');
    const twice = decide(sim.snapshot(id), { type: 'pause' }, new Date(), () => 'x');
    expect(twice).toMatchObject({ commands: [], changes: { tasksUpdated: [] } });
    sim.queue.push({ executionId: child, event: { type: 'cancel', message: 'no' } });
    sim.run();
    expect(sim.tasksOf(id)[0]).toMatchObject({ state: 'CANCELLED' });
    expect(sim.execution(id).state).toBe('PAUSED');
    sim.queue.push({ executionId: id, event: { type: 'resume' } });
    sim.run();
    expect(sim.execution(id)).toMatchObject({ state: 'CANCELLED', stateInfo: 'Cancelled tasks: call' });
  });

  it('with-items rerun without reset runs only the failed items', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    each:
      with-items: x in <% [1, 2, 3] %>
      action: std.echo output=<% $.x %>
      publish: {r: <% task().result %>}
`);
    let failTwo = true;
    const runs: unknown[] = [];
    const sim = new EngineSimulator(cat, (name, input) => {
      runs.push(input['output']);
      return failTwo && input['output'] === 2
        ? { state: 'ERROR', error: 'two' }
        : defaultActionScript(name, input);
    });
    const id = sim.create('wf');
    sim.run();
    expect(sim.tasksOf(id)[0]).toMatchObject({
      state: 'ERROR',
      stateInfo: 'One or more actions had failed.',
    });
    failTwo = false;
    sim.queue.push({
      executionId: id,
      event: { type: 'rerun-task', taskExecutionId: sim.tasksOf(id)[0]!.id, reset: false },
    });
    sim.run();
    expect(runs).toEqual([1, 2, 3, 2]);
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { r: [1, 2, 3] } });
  });

  it('a retried attempt gets its own timeout (DSL-18.6)', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    t:
      action: std.async_noop
      timeout: 2
      retry: {count: 1, delay: 1}
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('wf');
    sim.runWithTimers();
    const timeouts = sim.effects.filter((e) => e.type === 'arm-timer' && e.kind === 'timeout');
    expect(timeouts).toHaveLength(2);
    expect(sim.actionsOf(id).map((a) => a.accepted)).toEqual([false, false]);
    expect(sim.tasksOf(id)[0]).toMatchObject({ state: 'ERROR', stateInfo: 'Task timed out [timeout(s)=2].' });
  });

  it('wait-after delays the completed task in DELAYED before routing', () => {
    const cat = catalog(`
version: '2.0'
wf:
  tasks:
    t:
      wait-after: 3
      on-success: u
    u:
      action: std.noop
`);
    const sim = new EngineSimulator(cat);
    const id = sim.create('wf');
    sim.run();
    expect(sim.tasksOf(id)[0]).toMatchObject({
      state: 'DELAYED',
      stateInfo: "Delayed by 'wait-after' policy [delay=3]",
    });
    expect(sim.timers.map((t) => [t.kind, t.delayMs])).toEqual([['wait-after', 3000]]);
    sim.runWithTimers();
    expect(sim.taskStates(id)).toEqual({ t: 'SUCCESS', u: 'SUCCESS' });
  });

  it('rerun of a task in a failed sub-execution reopens the parent task and execution (DSL-15.6)', () => {
    let fail = true;
    const cat = catalog(`
version: '2.0'
parent:
  tasks:
    call:
      workflow: child
      publish: {got: <% task().result %>}
child:
  output:
    v: <% $.v %>
  tasks:
    boom:
      action: std.echo output=5
      publish: {v: <% task().result %>}
`);
    const sim = new EngineSimulator(cat, (name, input) =>
      fail ? { state: 'ERROR', error: 'no' } : defaultActionScript(name, input),
    );
    const id = sim.create('parent');
    sim.run();
    const childId = [...sim.executions.keys()].find((k) => k !== id)!;
    expect([sim.execution(id).state, sim.execution(childId).state]).toEqual(['ERROR', 'ERROR']);
    fail = false;
    sim.queue.push({
      executionId: childId,
      event: { type: 'rerun-task', taskExecutionId: sim.tasksOf(childId)[0]!.id, reset: true },
    });
    sim.run();
    expect(sim.execution(childId).state).toBe('SUCCESS');
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { got: { v: 5 } } });
    expect(sim.taskStates(id)).toEqual({ call: 'SUCCESS' });
  });
});

describe.each([
  ['full', false],
  ['partial', true],
])('decide: with-items (%s snapshots)', (_mode, partial) => {
  const items = (extra: string, list = '<% [1, 2, 3, 4] %>') =>
    catalog(`
version: '2.0'
wf:
  tasks:
    each:
      with-items: x in ${list}
      action: std.echo output=<% $.x %>
${extra}      publish: {r: <% task().result %>}
`);
  /** An executor whose items fail while `failing` holds them, recording every run. */
  const flaky =
    (failing: Set<unknown>, runs: unknown[]) => (name: string, input: Record<string, unknown>) => {
      runs.push(input['output']);
      if (failing.has(input['output'])) {
        failing.delete(input['output']);
        return { state: 'ERROR' as const, error: `bad ${String(input['output'])}` };
      }
      return defaultActionScript(name, input);
    };
  const simulator = (cat: Record<string, WorkflowSpec>, script?: ActionScript) => {
    const sim = new EngineSimulator(cat, script);
    sim.partialSnapshots = partial;
    return sim;
  };

  it('a retry reruns only the failed items; results stay in item order', () => {
    const runs: unknown[] = [];
    const sim = simulator(items('      retry: {count: 2, delay: 1}\n'), flaky(new Set([2, 4]), runs));
    const id = sim.create('wf');
    sim.runWithTimers();
    expect(runs).toEqual([1, 2, 3, 4, 2, 4]);
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { r: [1, 2, 3, 4] } });
    const [task] = sim.tasksOf(id);
    expect(task!.runtimeContext['retry_task_policy']).toEqual({ retry_no: 1 });
    // the failed attempts of items 2 and 4 are no longer accepted; each item has one accepted action
    const accepted = sim.actionsOf(id).filter((a) => a.accepted);
    expect(accepted.map((a) => [a.itemIndex, a.state]).sort()).toEqual([
      [0, 'SUCCESS'],
      [1, 'SUCCESS'],
      [2, 'SUCCESS'],
      [3, 'SUCCESS'],
    ]);
    expect(
      sim
        .actionsOf(id)
        .filter((a) => !a.accepted)
        .map((a) => [a.itemIndex, a.state]),
    ).toEqual([
      [1, 'ERROR'],
      [3, 'ERROR'],
    ]);
  });

  it('an item failing on every attempt fails the task after count retries, run count + 1 times', () => {
    const runs: unknown[] = [];
    const sim = simulator(
      items('      retry: {count: 2, delay: 0}\n'),
      (name, input) => (
        runs.push(input['output']),
        input['output'] === 3 ? { state: 'ERROR', error: 'never' } : defaultActionScript(name, input)
      ),
    );
    const id = sim.create('wf');
    sim.runWithTimers();
    expect(runs).toEqual([1, 2, 3, 4, 3, 3]);
    expect(sim.tasksOf(id)[0]).toMatchObject({
      state: 'ERROR',
      stateInfo: 'One or more actions had failed.',
      result: [1, 2, 'never', 4],
    });
    // idx counts every action execution of the task, earlier attempts included (DSL-13.3)
    expect(sim.execution(id).stateInfo).toMatch(/idx=2\]: never\n.*idx=4\]: never\n.*idx=5\]: never\n$/s);
  });

  it('concurrency holds on a retry: the failed items rerun one at a time', () => {
    const runs: unknown[] = [];
    const sim = simulator(
      items('      concurrency: 1\n      retry: {count: 1, delay: 0}\n'),
      flaky(new Set([1, 3]), runs),
    );
    const id = sim.create('wf');
    sim.run();
    // one item at a time: each run-action follows the previous completion
    expect(sim.effects.filter((e) => e.type === 'run-action')).toHaveLength(4);
    sim.runWithTimers();
    expect(runs).toEqual([1, 2, 3, 4, 1, 3]);
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { r: [1, 2, 3, 4] } });
  });

  it('continue-on repeats every item of a successful with-items task', () => {
    const runs: unknown[] = [];
    const sim = simulator(
      items('      retry: {count: 1, delay: 0, continue-on: <% true %>}\n', '<% [1, 2] %>'),
      flaky(new Set(), runs),
    );
    const id = sim.create('wf');
    sim.runWithTimers();
    expect(runs).toEqual([1, 2, 1, 2]);
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { r: [1, 2] } });
    expect(sim.actionsOf(id).map((a) => a.accepted)).toEqual([false, false, true, true]);
  });

  it('rerun with reset false after a timeout runs the unfinished and failed items only', () => {
    const runs: unknown[] = [];
    let hang = true;
    const sim = simulator(items('      timeout: 5\n'), (name, input) => {
      runs.push(input['output']);
      if (input['output'] === 2 && hang) return 'async';
      if (input['output'] === 3 && hang) return { state: 'ERROR', error: 'three' };
      return defaultActionScript(name, input);
    });
    const id = sim.create('wf');
    sim.runWithTimers();
    expect(sim.tasksOf(id)[0]).toMatchObject({ state: 'ERROR', stateInfo: 'Task timed out [timeout(s)=5].' });
    hang = false;
    sim.queue.push({
      executionId: id,
      event: { type: 'rerun-task', taskExecutionId: sim.tasksOf(id)[0]!.id, reset: false },
    });
    sim.run();
    expect(runs).toEqual([1, 2, 3, 4, 2, 3]);
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { r: [1, 2, 3, 4] } });
    // the late answer of the abandoned first run of item 2 changes nothing
    const late = sim.asyncActions[0]!;
    sim.send(id, {
      type: 'action-completed',
      taskExecutionId: late.taskExecutionId,
      actionExecutionId: late.actionExecutionId,
      state: 'SUCCESS',
      result: 'late',
    });
    expect(sim.tasksOf(id)[0]!.result).toEqual([1, 2, 3, 4]);
  });

  const asyncItems = catalog(`
version: '2.0'
wf:
  tasks:
    each:
      with-items: x in <% [1, 2, 3] %>
      concurrency: 2
      action: std.async_noop
      publish: {r: <% task().result %>}
      publish-on-error: {failed: <% task().result %>}
`);
  const complete = (
    sim: EngineSimulator,
    id: string,
    i: number,
    state: 'SUCCESS' | 'ERROR' | 'CANCELLED',
    result?: unknown,
  ) => {
    const a = sim.asyncActions[i]!;
    sim.send(id, {
      type: 'action-completed',
      taskExecutionId: a.taskExecutionId,
      actionExecutionId: a.actionExecutionId,
      state,
      result,
      error: 'e',
    });
    sim.run();
  };

  it('publishes once, after the last item, with the results in item order whatever the completion order', () => {
    const sim = simulator(asyncItems);
    const id = sim.create('wf');
    sim.run();
    expect(sim.asyncActions).toHaveLength(2);
    complete(sim, id, 1, 'SUCCESS', 'two');
    // the freed slot starts the third item; nothing is published yet
    expect(sim.asyncActions).toHaveLength(3);
    expect(sim.tasksOf(id)[0]).toMatchObject({ state: 'RUNNING', published: {}, result: null });
    complete(sim, id, 2, 'SUCCESS', 'three');
    expect(sim.tasksOf(id)[0]!.published).toEqual({});
    complete(sim, id, 0, 'SUCCESS', 'one');
    expect(sim.tasksOf(id)[0]).toMatchObject({ state: 'SUCCESS', published: { r: ['one', 'two', 'three'] } });
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { r: ['one', 'two', 'three'] } });
  });

  it('no item starts while the execution is PAUSED: running items finish and count, the waiting ones start on resume', () => {
    const sim = simulator(asyncItems);
    const id = sim.create('wf');
    sim.run();
    expect(sim.actionsOf(id).map((a) => a.itemIndex)).toEqual([0, 1]);
    sim.send(id, { type: 'pause' });
    complete(sim, id, 1, 'SUCCESS', 'two');
    // the freed slot stays empty while paused; the result is recorded
    expect(sim.asyncActions).toHaveLength(2);
    expect(sim.effects.filter((e) => e.type === 'run-action')).toHaveLength(2);
    complete(sim, id, 0, 'SUCCESS', 'one');
    expect(sim.asyncActions).toHaveLength(2);
    expect(sim.tasksOf(id)[0]).toMatchObject({ state: 'RUNNING', result: null });
    // the counters in the task row, the results in the items' own rows (issue 17: O(1) per item)
    expect(sim.tasksOf(id)[0]!.runtimeContext['with_items_progress']).toMatchObject({ running: 0, done: 2 });
    expect(sim.itemsOf(id, sim.tasksOf(id)[0]!.id).map((r) => r.result)).toEqual(['one', 'two', null]);
    expect(sim.execution(id).state).toBe('PAUSED');
    sim.send(id, { type: 'resume' });
    sim.run();
    expect(sim.actionsOf(id).map((a) => a.itemIndex)).toEqual([0, 1, 2]);
    complete(sim, id, 2, 'SUCCESS', 'three');
    expect(sim.actionsOf(id).map((a) => [a.itemIndex, a.state])).toEqual([
      [0, 'SUCCESS'],
      [1, 'SUCCESS'],
      [2, 'SUCCESS'],
    ]);
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { r: ['one', 'two', 'three'] } });
  });

  it('items finishing while PAUSED complete the task; its routing waits for resume', () => {
    const sim = simulator(asyncItems);
    const id = sim.create('wf');
    sim.run();
    complete(sim, id, 0, 'SUCCESS', 1);
    expect(sim.asyncActions).toHaveLength(3);
    sim.send(id, { type: 'pause' });
    complete(sim, id, 1, 'SUCCESS', 2);
    complete(sim, id, 2, 'SUCCESS', 3);
    expect(sim.tasksOf(id)[0]).toMatchObject({
      state: 'SUCCESS',
      processed: false,
      published: { r: [1, 2, 3] },
    });
    expect(sim.execution(id).state).toBe('PAUSED');
    sim.send(id, { type: 'resume' });
    sim.run();
    expect(sim.asyncActions).toHaveLength(3);
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { r: [1, 2, 3] } });
  });

  it('a resume starts no item of a with-items task whose items all started', () => {
    const sim = simulator(asyncItems);
    const id = sim.create('wf');
    sim.run();
    complete(sim, id, 0, 'SUCCESS', 1);
    sim.send(id, { type: 'pause' });
    const d = sim.send(id, { type: 'resume' });
    expect(d.commands.filter((c) => c.type === 'run-action')).toEqual([]);
    expect(d.changes.tasksUpdated).toEqual([]);
  });

  const longList = (n: number) =>
    catalog(`
version: '2.0'
wf:
  tasks:
    each:
      with-items: x in <% range(${n}) %>
      action: std.async_noop
      publish: {r: <% task().result %>}
`);
  /** Decides what the queue holds, one event at a time: the runs each decision starts and its start-items effects. */
  const drain = (sim: EngineSimulator) => {
    const starts: number[] = [];
    const continued: EngineEffect[] = [];
    for (let next = sim.queue.shift(); next; next = sim.queue.shift()) {
      const d = sim.send(next.executionId, next.event);
      starts.push(d.commands.filter((c) => c.type === 'run-action').length);
      continued.push(...d.commands.filter((c) => c.type === 'start-items'));
    }
    return { starts, continued };
  };

  it('a long list starts in growing windows, each decision sending start-items for the rest; items start once, in order', () => {
    const sim = simulator(longList(4500));
    sim.itemsPerDecision = ITEMS_STARTED_PER_DECISION;
    const id = sim.create('wf');
    const { starts, continued } = drain(sim);
    const taskExecutionId = sim.tasksOf(id)[0]!.id;
    // 1,000 first, then as many as started before: 1,000, 2,000, and the last 500
    expect(starts).toEqual([1000, 1000, 2000, 500]);
    expect(continued).toEqual([
      { type: 'start-items', taskExecutionId, cursor: 1000 },
      { type: 'start-items', taskExecutionId, cursor: 2000 },
      { type: 'start-items', taskExecutionId, cursor: 4000 },
    ]);
    expect(sim.actionsOf(id).map((a) => a.itemIndex)).toEqual(Array.from({ length: 4500 }, (_, i) => i));
    // a redelivered start-items starts nothing
    const again = sim.send(id, { type: 'start-items', taskExecutionId });
    expect(again.commands).toEqual([]);
    expect(again.changes.actionsCreated).toEqual([]);
    // the results, applied in reverse order in one decision, complete the task in item order
    const results = sim.asyncActions
      .slice()
      .reverse()
      .map((a): EngineEvent => ({
        type: 'action-completed',
        taskExecutionId: a.taskExecutionId,
        actionExecutionId: a.actionExecutionId,
        state: 'SUCCESS',
        result: sim.actionsOf(id).find((x) => x.id === a.actionExecutionId)!.itemIndex,
      }));
    sim.sendBatch(id, results);
    expect(sim.execution(id)).toMatchObject({
      state: 'SUCCESS',
      output: { r: Array.from({ length: 4500 }, (_, i) => i) },
    });
  });

  it('without itemsPerDecision every item starts in the first decision (Mistral)', () => {
    const sim = simulator(longList(2500));
    const id = sim.create('wf');
    const { starts, continued } = drain(sim);
    expect(starts).toEqual([2500]);
    expect(continued).toEqual([]);
    expect(sim.actionsOf(id)).toHaveLength(2500);
  });

  it('results applied while items wait start the next window too; one start-items per decision', () => {
    const sim = simulator(longList(3000));
    sim.itemsPerDecision = ITEMS_STARTED_PER_DECISION;
    const id = sim.create('wf');
    sim.send(id, sim.queue.shift()!.event);
    const [startItems] = sim.queue.splice(0);
    expect(startItems?.event.type).toBe('start-items');
    const results = sim.asyncActions.slice(0, 10).map((a): EngineEvent => ({
      type: 'action-completed',
      taskExecutionId: a.taskExecutionId,
      actionExecutionId: a.actionExecutionId,
      state: 'SUCCESS',
      result: 'r',
    }));
    const d = sim.sendBatch(id, results);
    expect(d.commands.filter((c) => c.type === 'run-action')).toHaveLength(1000);
    expect(d.commands.filter((c) => c.type === 'start-items')).toHaveLength(1);
    // the earlier start-items starts the rest (1,000: as many as started before it, bounded by the list)
    sim.queue.splice(0);
    const last = sim.send(id, startItems!.event);
    expect(last.commands.filter((c) => c.type === 'run-action')).toHaveLength(1000);
    expect(last.commands.filter((c) => c.type === 'start-items')).toEqual([]);
    expect(new Set(sim.actionsOf(id).map((a) => a.itemIndex)).size).toBe(3000);
  });

  it('start-items starts nothing while the execution is PAUSED; resume starts the next window', () => {
    const sim = simulator(longList(2500));
    sim.itemsPerDecision = ITEMS_STARTED_PER_DECISION;
    const id = sim.create('wf');
    sim.send(id, sim.queue.shift()!.event);
    const [startItems] = sim.queue.splice(0);
    sim.send(id, { type: 'pause' });
    const paused = sim.send(id, startItems!.event);
    expect(paused.commands).toEqual([]);
    expect(sim.actionsOf(id)).toHaveLength(1000);
    sim.send(id, { type: 'resume' });
    const { starts } = drain(sim);
    expect(sim.actionsOf(id)).toHaveLength(2500);
    expect(starts.reduce((a, b) => a + b, 0)).toBe(500);
  });

  it('a cancelled item makes the task CANCELLED once every item is done, even with a failed one', () => {
    const sim = simulator(asyncItems);
    const id = sim.create('wf');
    sim.run();
    complete(sim, id, 0, 'CANCELLED');
    complete(sim, id, 1, 'ERROR');
    expect(sim.tasksOf(id)[0]!.state).toBe('RUNNING');
    complete(sim, id, 2, 'SUCCESS', 3);
    expect(sim.tasksOf(id)[0]).toMatchObject({
      state: 'CANCELLED',
      stateInfo: 'One or more actions was cancelled.',
    });
    expect(sim.execution(id)).toMatchObject({ state: 'CANCELLED', stateInfo: 'Cancelled tasks: each' });
  });

  it('a failed item fails the task once every item is done; publish-on-error sees every result', () => {
    const sim = simulator(asyncItems);
    const id = sim.create('wf');
    sim.run();
    complete(sim, id, 0, 'ERROR');
    expect(sim.tasksOf(id)[0]!.state).toBe('RUNNING');
    complete(sim, id, 1, 'SUCCESS', 2);
    complete(sim, id, 2, 'SUCCESS', 3);
    expect(sim.tasksOf(id)[0]).toMatchObject({
      state: 'ERROR',
      stateInfo: 'One or more actions had failed.',
      published: { failed: ['e', 2, 3] },
    });
  });

  it('rerun with reset true reruns every item and re-evaluates the list', () => {
    const runs: unknown[] = [];
    const sim = simulator(items(''), flaky(new Set([2]), runs));
    const id = sim.create('wf');
    sim.run();
    sim.queue.push({
      executionId: id,
      event: { type: 'rerun-task', taskExecutionId: sim.tasksOf(id)[0]!.id, reset: true },
    });
    sim.run();
    expect(runs).toEqual([1, 2, 3, 4, 1, 2, 3, 4]);
    expect(sim.actionsOf(id).map((a) => a.accepted)).toEqual([
      false,
      false,
      false,
      false,
      true,
      true,
      true,
      true,
    ]);
    expect(sim.execution(id)).toMatchObject({ state: 'SUCCESS', output: { r: [1, 2, 3, 4] } });
  });
});
