import { parseWorkflows, setExpressionValidator, type TaskSpec, type WorkflowSpec } from '../src';
import { issuesOf, tasks, wf, y } from './dsl-test-support';

const only = (text: string): WorkflowSpec => {
  const { workflows } = parseWorkflows(text);
  expect(workflows).toHaveLength(1);
  return workflows[0]!;
};
const task = (spec: WorkflowSpec, name: string): TaskSpec => {
  const t = spec.tasks.find((x) => x.name === name);
  if (!t) throw new Error(`no task ${name}`);
  return t;
};
const t1 = (block: string, extra = ''): TaskSpec => task(only(tasks(block, extra)), 't1');

describe('parseWorkflows builds the model', () => {
  it('defaults a task without action or workflow to std.noop', () => {
    const t = t1('t1:\n  description: nothing\n');
    expect(t).toMatchObject({
      type: 'ACTION',
      action: 'std.noop',
      input: {},
      keepResult: true,
      safeRerun: false,
    });
    expect(t.withItems).toEqual([]);
  });

  it.each([
    ['std.echo output="hi" x=1', 'std.echo', { output: 'hi', x: 1 }],
    ["std.echo output='single'", 'std.echo', { output: 'single' }],
    ['std.echo output=<% $.a %> n=12', 'std.echo', { output: '<% $.a %>', n: 12 }],
    ['std.echo output={{ _.a }}', 'std.echo', { output: '{{ _.a }}' }],
    ['std.echo output=[1, "a"]', 'std.echo', { output: [1, 'a'] }],
    ['std.echo output=[not json', 'std.echo', {}],
    ['std.echo a=true b=false c=null', 'std.echo', { a: true, b: false, c: null }],
    ['std.echo output=abc', 'std.echo', {}],
    ['std.echo output={a: 1}', 'std.echo', {}],
    ['std.echo x=1.5', 'std.echo', { x: 1 }],
    ['std.echo key-with-dash=1 under_score=2', 'std.echo', { 'key-with-dash': 1, under_score: 2 }],
    ['std.echo x=1 x=2', 'std.echo', { x: 2 }],
    ['my-action param=1', 'my-action', { param: 1 }],
    ['std.http url="http://h/?a=1" method=POST', 'std.http', { url: 'http://h/?a=1' }],
    ['<% $.name %> x=1', '<% $.name %>', { x: 1 }],
    ['std.echo', 'std.echo', {}],
  ])('inline action %s', (action, name, params) => {
    const t = t1(`t1:\n  action: '${action.replace(/'/g, "''")}'\n`);
    expect(t.action).toBe(name);
    expect(t.inlineInput).toEqual(params);
    expect(t.input).toEqual(params);
  });

  it('merges inline parameters into input, inline winning', () => {
    const t = t1('t1:\n  action: std.echo output=inline\n  input:\n    output: map\n    other: 1\n');
    expect(t.action).toBe('std.echo');
    expect(t.input).toEqual({ output: 'map', other: 1 });
    const t2 = t1('t1:\n  action: std.echo output="inline"\n  input:\n    output: map\n');
    expect(t2.input).toEqual({ output: 'inline' });
  });

  it('keeps an expression input', () => {
    expect(t1('t1:\n  action: std.echo\n  input: <% $.params %>\n').input).toBe('<% $.params %>');
  });

  it('models a workflow task with inline input', () => {
    const t = t1('t1:\n  workflow: sub_wf a=1 b="two"\n');
    expect(t).toMatchObject({ type: 'WORKFLOW', workflow: 'sub_wf', input: { a: 1, b: 'two' } });
    expect(t.action).toBeUndefined();
  });

  it('normalises every transition form', () => {
    const spec = only(
      tasks(
        y`
          t1:
            on-success: t2
            on-error:
              - t3
              - t4: <% $.x > 1 %>
              - fail msg="bad <% $.x %>"
            on-complete:
              publish:
                branch:
                  b: 1
                global:
                  g: <% $.b %>
                atomic:
                  a: 2
              next:
                - t5
                - pause: <% $.stop %>
            on-skip:
              next: succeed
          t2: {action: std.noop}
          t3: {action: std.noop}
          t4: {action: std.noop}
          t5: {action: std.noop}
        `,
      ),
    );
    const t = task(spec, 't1');
    expect(t.transitions['on-success']).toEqual([{ target: 't2', kind: 'task', params: {} }]);
    expect(t.transitions['on-error']).toEqual([
      { target: 't3', kind: 'task', params: {} },
      { target: 't4', kind: 'task', condition: '<% $.x > 1 %>', params: {} },
      { target: 'fail', kind: 'command', params: { msg: 'bad <% $.x %>' } },
    ]);
    expect(t.transitions['on-complete']).toEqual([
      { target: 't5', kind: 'task', params: {} },
      { target: 'pause', kind: 'command', condition: '<% $.stop %>', params: {} },
    ]);
    expect(t.transitions['on-skip']).toEqual([{ target: 'succeed', kind: 'command', params: {} }]);
    expect(t.clauses['on-complete']?.publish).toEqual({
      branch: { b: 1 },
      global: { g: '<% $.b %>' },
      atomic: { a: 2 },
    });
    expect(spec.startTasks).toEqual(['t1']);
    expect(spec.inboundTasks).toMatchObject({ t1: [], t2: ['t1'], t5: ['t1'] });
  });

  it.each([
    ['fail', 'fail', {}],
    ['fail msg="text"', 'fail', { msg: 'text' }],
    ['fail(msg="text with spaces")', 'fail', { msg: 'text with spaces' }],
    ['fail(msg="nospace")', 'fail', { msg: 'nospace' }],
    ['succeed msg=<% $.x %>', 'succeed', { msg: '<% $.x %>' }],
    ['pause', 'pause', {}],
    ['noop', 'noop', {}],
  ])('engine command %s', (text, command, params) => {
    const t = t1(`t1:\n  on-complete: '${text}'\n`);
    expect(t.transitions['on-complete']).toEqual([{ target: command, kind: 'command', params }]);
  });

  it('treats a target named like a command as the command even if a task has that name', () => {
    const spec = only(tasks('t1:\n  on-success: fail\nfail:\n  action: std.noop\n'));
    expect(task(spec, 't1').transitions['on-success'][0]).toMatchObject({ kind: 'command' });
    expect(spec.startTasks).toEqual(['t1', 'fail']);
  });

  it.each([
    ['all', 'all'],
    ['one', 1],
    ['2', 2],
    ['0', undefined],
  ])('join %s', (written, expected) => {
    const spec = only(tasks(`a:\n  on-success: j\nb:\n  on-success: j\nj:\n  join: ${written}\n`));
    expect(task(spec, 'j').join).toBe(expected);
    expect(spec.inboundTasks.j).toEqual(['a', 'b']);
  });

  it('models policies, literal and expressions', () => {
    const t = t1(
      y`
        t1:
          retry:
            count: 3
            delay: <% $.delay %>
            break-on: <% $.ok %>
            continue-on: <% $.more %>
          wait-before: 1
          wait-after: <% $.after %>
          timeout: 0
          pause-before: true
          concurrency: <% $.n %>
          fail-on: <% $.bad %>
          keep-result: <% $.keep %>
          safe-rerun: yes
          target: <% $.where %>
      `,
    );
    expect(t.policies).toEqual({
      retry: { count: 3, delay: '<% $.delay %>', breakOn: '<% $.ok %>', continueOn: '<% $.more %>' },
      waitBefore: 1,
      waitAfter: '<% $.after %>',
      timeout: 0,
      pauseBefore: true,
      concurrency: '<% $.n %>',
      failOn: '<% $.bad %>',
    });
    expect(t).toMatchObject({ keepResult: '<% $.keep %>', safeRerun: true, target: '<% $.where %>' });
  });

  it('parses one-line retry like inline parameters', () => {
    expect(t1('t1:\n  retry: count=3 delay=2 break-on=<% $.x = 1 %>\n').policies.retry).toEqual({
      count: 3,
      delay: 2,
      breakOn: '<% $.x = 1 %>',
    });
  });

  it('accepts Jinja expressions for policies', () => {
    expect(t1('t1:\n  timeout: "{{ _.t }}"\n').policies.timeout).toBe('{{ _.t }}');
  });

  it('applies task-defaults per kind and drops self-references', () => {
    const spec = only(
      tasks(
        y`
          t1:
            timeout: 5
            on-success: t2
          t2:
            retry: count=1 delay=1
          handler:
            action: std.noop
        `,
        y`
          task-defaults:
            timeout: 10
            wait-before: 2
            retry:
              count: 9
              delay: 9
            safe-rerun: true
            on-error: [handler]
            on-success: [handler]
        `,
      ),
    );
    const [a, b, h] = ['t1', 't2', 'handler'].map((n) => task(spec, n));
    expect(a!.policies).toMatchObject({ timeout: 5, waitBefore: 2, retry: { count: 9, delay: 9 } });
    expect(b!.policies).toMatchObject({ timeout: 10, retry: { count: 1, delay: 1 } });
    expect(a!.transitions['on-success']).toEqual([{ target: 't2', kind: 'task', params: {} }]);
    expect(b!.transitions['on-success']).toEqual([{ target: 'handler', kind: 'task', params: {} }]);
    expect(a!.transitions['on-error']).toEqual([{ target: 'handler', kind: 'task', params: {} }]);
    expect(h!.transitions['on-error']).toEqual([]);
    expect(h!.transitions['on-success']).toEqual([]);
    expect(a!.safeRerun).toBe(true);
    expect(a!.clauses['on-error']).toBeUndefined();
    expect(spec.taskDefaults?.clauses['on-error']?.next).toHaveLength(1);
    expect(spec.startTasks).toEqual(['t1']);
  });

  it('uses default transitions when the own clause only publishes', () => {
    const spec = only(
      tasks(
        't1:\n  on-success:\n    publish:\n      branch:\n        x: 1\nh: {action: std.noop}\n',
        'task-defaults:\n  on-success: h\n',
      ),
    );
    expect(task(spec, 't1').transitions['on-success']).toEqual([{ target: 'h', kind: 'task', params: {} }]);
  });

  it('models with-items', () => {
    expect(t1('t1:\n  with-items: x in [1, 2, 3]\n').withItems).toEqual([
      { variable: 'x', source: [1, 2, 3] },
    ]);
    expect(
      t1(
        't1:\n  with-items:\n    - a in <% $.list %>\n    - b in {{ _.other }}\n    - \'c in ["x", {"k": 1}]\'\n',
      ).withItems,
    ).toEqual([
      { variable: 'a', source: '<% $.list %>' },
      { variable: 'b', source: '{{ _.other }}' },
      { variable: 'c', source: ['x', { k: 1 }] },
    ]);
  });

  it('models publish maps', () => {
    const t = t1(
      't1:\n  publish:\n    a: <% task().result %>\n  publish-on-error:\n    e: 1\n  publish-on-skip:\n    s: {{ 1 }}\n'.replace(
        '{{ 1 }}',
        '"{{ 1 }}"',
      ),
    );
    expect(t.publish).toEqual({ a: '<% task().result %>' });
    expect(t.publishOnError).toEqual({ e: 1 });
    expect(t.publishOnSkip).toEqual({ s: '{{ 1 }}' });
  });

  it('models a reverse workflow with requires and default requires', () => {
    const spec = only(
      wf(
        y`
          type: reverse
          task-defaults:
            requires: [base]
          tasks:
            base: {action: std.noop}
            a:
              requires: base
            b:
              requires: [a]
            c: {action: std.noop}
        `,
      ),
    );
    expect(spec.type).toBe('reverse');
    expect(spec.tasks.map((t) => [t.name, t.requires])).toEqual([
      ['base', []],
      ['a', ['base']],
      ['b', ['a', 'base']],
      ['c', ['base']],
    ]);
    expect(spec.startTasks).toEqual(['base']);
  });

  it('models workflow keys', () => {
    const spec = only(
      y`
        version: 2.0
        wf:
          type: direct
          description: d
          tags: [a, b]
          input:
            - x
            - y: 2
            - z: null
            - w: <% 1 %>
          output:
            o: <% $.x %>
          output-on-error:
            e: 1
          vars:
            v: [1]
          tasks:
            t1: {action: std.noop}
      `,
    );
    expect(spec).toMatchObject({
      name: 'wf',
      version: '2.0',
      type: 'direct',
      description: 'd',
      tags: ['a', 'b'],
    });
    expect(spec.input).toEqual([
      { name: 'x', required: true },
      { name: 'y', required: false, default: 2 },
      { name: 'z', required: false, default: null },
      { name: 'w', required: false, default: '<% 1 %>' },
    ]);
    expect(spec.output).toEqual({ o: '<% $.x %>' });
    expect(spec.outputOnError).toEqual({ e: 1 });
    expect(spec.vars).toEqual({ v: [1] });
  });

  it.each([["'2.0'"], ['2.0'], ['2'], ["'2'"], ["' 2.0 '"], ['2.00']])('accepts version %s', (v) => {
    expect(
      parseWorkflows(
        `version: ${v}\nwf:\n  tasks:\n    t1: {action: std.noop}\n`.replace('{}', '{action: std.noop}'),
      ).workflows,
    ).toHaveLength(1);
  });

  it('keeps the model JSON-serialisable', () => {
    const spec = only(tasks('t1:\n  on-success: [t2]\n  retry: count=1 delay=1\nt2: {action: std.noop}\n'));
    expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
  });

  it('reads YAML 1.1 scalars like PyYAML', () => {
    const spec = only(
      y`
        version: '2.0'
        wf:
          vars:
            on_value: on
            off_value: Off
            y_value: y
            date: 2024-01-31
            exp: 1e3
            octal: 017
            sexagesimal: 1:30
            underscored: 1_000
            at: @home
          tasks:
            t1:
              keep-result: no
              pause-before: on
      `,
    );
    expect(spec.vars).toEqual({
      on_value: true,
      off_value: false,
      y_value: 'y',
      date: '2024-01-31',
      exp: '1e3',
      octal: 15,
      sexagesimal: 90,
      underscored: 1000,
      at: '@home',
    });
    expect(task(spec, 't1')).toMatchObject({ keepResult: false, policies: { pauseBefore: true } });
  });

  it('lets a later duplicate key win, like PyYAML', () => {
    const spec = only(tasks('t1:\n  action: std.echo output=1\n  action: std.noop\n'));
    expect(task(spec, 't1').action).toBe('std.noop');
  });

  it('expands a few aliases', () => {
    const spec = only(
      "version: '2.0'\nwf:\n  vars:\n    a: &x [1, 2]\n    b: *x\n  tasks:\n    t1: {action: std.noop}\n",
    );
    expect(spec.vars).toEqual({ a: [1, 2], b: [1, 2] });
  });

  it('never evaluates input defaults', () => {
    expect(only(wf('input:\n  - a: <% 1 + 1 %>\ntasks:\n  t1: {action: std.noop}\n')).input[0]!.default).toBe(
      '<% 1 + 1 %>',
    );
  });

  it('tolerates name and version keys inside a workflow', () => {
    expect(only(wf("name: other\nversion: '2.0'\ntasks:\n  t1: {action: std.noop}\n")).name).toBe('wf');
  });
});

describe('several workflows in one document', () => {
  const text = y`
    version: '2.0'
    first:
      input: [a]
      tasks:
        t1:
          action: std.echo output=<% $.a %>
    second:
      type: reverse
      tasks:
        t1: {action: std.noop}
  `;

  it('returns every workflow in written order', () => {
    expect(parseWorkflows(text).workflows.map((w) => [w.name, w.type])).toEqual([
      ['first', 'direct'],
      ['second', 'reverse'],
    ]);
  });

  it('re-serialises each workflow with the version', () => {
    const { definitions } = parseWorkflows(text);
    expect(definitions.first).toBe(
      "version: '2.0'\nfirst:\n  input:\n  - a\n  tasks:\n    t1:\n      action: std.echo output=<% $.a %>\n",
    );
    expect(definitions.second).toBe(
      "version: '2.0'\nsecond:\n  type: reverse\n  tasks:\n    t1:\n      action: std.noop\n",
    );
    expect(parseWorkflows(definitions.first!).workflows[0]!.name).toBe('first');
  });

  it('stores a single workflow text unchanged', () => {
    const single = "version: '2.0'\n# comment\nwf:\n  tasks:\n    t1: {action: std.noop}\n";
    expect(parseWorkflows(single).definitions.wf).toBe(single);
  });
});

describe('skip validation', () => {
  it('ignores semantic and expression issues', () => {
    const text = tasks('t1:\n  on-success: t9\n  publish:\n    x: <% $.( %>\n');
    expect(() => parseWorkflows(text)).toThrow();
    const { workflows } = parseWorkflows(text, { validate: false });
    expect(workflows[0]!.tasks[0]!.transitions['on-success'][0]!.target).toBe('t9');
  });

  it('still rejects what cannot be modelled', () => {
    const issues = issuesOf(() => parseWorkflows(tasks('t1:\n  acton: x\n'), { validate: false }));
    expect(issues[0]!.path).toBe('workflows.wf.tasks.t1.acton');
    expect(() => parseWorkflows("version: '2.0'\nwf: [1\n", { validate: false })).toThrow(
      /Definition could not be parsed/,
    );
  });
});

describe('expression validator injection', () => {
  afterEach(() => setExpressionValidator());

  it('uses the installed validator and reports its messages with the path', () => {
    setExpressionValidator((text) => (text.includes('forbidden') ? [`Parse error in ${text}`] : []));
    const issues = issuesOf(() => parseWorkflows(tasks('t1:\n  publish:\n    x: <% forbidden %>\n')));
    expect(issues[0]).toMatchObject({
      kind: 'expression',
      path: 'workflows.wf.tasks.t1.publish.x',
      message: 'Parse error in <% forbidden %>',
    });
    expect(parseWorkflows(tasks('t1:\n  publish:\n    x: <% $.( %>\n')).workflows).toHaveLength(1);
  });

  it('takes a per-call validator', () => {
    const text = tasks('t1:\n  publish:\n    x: <% fine %>\n');
    expect(() => parseWorkflows(text, { expressionValidator: () => ['nope'] })).toThrow(/nope/);
    expect(parseWorkflows(text).workflows).toHaveLength(1);
  });

  it('does not call the validator for strings without expressions', () => {
    const seen: string[] = [];
    parseWorkflows(tasks('t1:\n  action: std.echo output="plain"\n  publish:\n    x: <% 1 %>\n'), {
      expressionValidator: (t) => {
        seen.push(t);
        return [];
      },
    });
    expect(seen).toEqual(['<% 1 %>']);
  });
});
