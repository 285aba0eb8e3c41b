import { TransientError } from '@osc/errors';
import {
  evaluate,
  evaluateJinja,
  evaluateYaql,
  ExpressionError,
  type ExpressionHost,
  type TasksFilter,
} from './index';

/** A host double recording the calls the functions make (the engine implements the real one). */
function fakeHost() {
  const calls: unknown[] = [];
  const tasks = [
    {
      id: 't1',
      name: 'fetch',
      state: 'SUCCESS',
      state_info: null,
      result: [1, 2],
      published: { x: 1 },
      spec: { action: 'std.noop' },
    },
    { id: 't2', name: 'store', state: 'ERROR', state_info: 'boom', result: null, published: {}, spec: {} },
  ];
  const host: ExpressionHost = {
    task: (name) => {
      calls.push(['task', name]);
      if (name === undefined) return tasks[0];
      return tasks.find((t) => t.name === name) ?? null;
    },
    tasks: (filter: TasksFilter) => {
      calls.push(['tasks', filter]);
      return tasks.filter((t) => !filter.state || t.state === filter.state);
    },
    execution: () => ({
      id: 'ex-1',
      name: 'wf',
      input: { a: 1 },
      state: 'RUNNING',
      params: {},
      created_at: '2026-01-02 03:04:05',
      spec: {},
    }),
    executions: (filter) => {
      calls.push(['executions', filter]);
      return [{ id: 'ex-1', state: 'RUNNING' }];
    },
    env: () => ({ region: 'r1' }),
    global: (name) => (name === 'g' ? 'global-value' : null),
    uuid: () => '00000000-0000-4000-8000-000000000000',
  };
  return { host, calls };
}

describe('Mistral functions', () => {
  it('task() reads the current or a named task through the host', () => {
    const { host, calls } = fakeHost();
    expect(evaluateYaql('task().result', {}, host)).toEqual([1, 2]);
    expect(evaluateYaql('task(fetch).published.x', {}, host)).toBe(1);
    expect(evaluateYaql("task('store').state_info", {}, host)).toBe('boom');
    expect(evaluateYaql('task(nope)', {}, host)).toBeNull();
    expect(evaluateJinja("task('store').state", {}, host)).toBe('ERROR');
    expect(evaluate('<% task().state %>/{{ "x" }}', {}, host)).toBe('<% task().state %>/x');
    expect(calls).toContainEqual(['task', undefined]);
    expect(calls).toContainEqual(['task', 'fetch']);
  });

  it('tasks() passes its filters (keyword or positional)', () => {
    const { host, calls } = fakeHost();
    expect(evaluateYaql('tasks(state => ERROR).name', {}, host)).toEqual(['store']);
    expect(evaluateYaql('tasks(null, true, SUCCESS).id', {}, host)).toEqual(['t1']);
    expect(evaluateJinja("tasks(state='ERROR') | map(attribute='name') | list", {}, host)).toEqual(['store']);
    expect(calls).toContainEqual([
      'tasks',
      { workflowExecutionId: null, recursive: false, state: 'ERROR', flat: false },
    ]);
    expect(calls).toContainEqual([
      'tasks',
      { workflowExecutionId: null, recursive: true, state: 'SUCCESS', flat: false },
    ]);
  });

  it('execution(), executions(), env(), global() and uuid()', () => {
    const { host, calls } = fakeHost();
    expect(evaluateYaql('execution().input.a', {}, host)).toBe(1);
    expect(evaluateYaql('execution().created_at', {}, host)).toBe('2026-01-02 03:04:05');
    expect(evaluateYaql('executions(state => RUNNING).len()', {}, host)).toBe(1);
    expect(calls).toContainEqual([
      'executions',
      { id: null, rootExecutionId: null, state: 'RUNNING', fromTime: null, toTime: null },
    ]);
    expect(evaluateYaql('env().region', {}, host)).toBe('r1');
    expect(evaluateJinja('env().region', {}, host)).toBe('r1');
    expect(evaluateYaql('global(g)', {}, host)).toBe('global-value');
    expect(evaluateYaql('global(x)', {}, host)).toBeNull();
    expect(evaluateYaql('uuid()', {}, host)).toBe('00000000-0000-4000-8000-000000000000');
    expect(evaluateJinja('uuid()', {}, host)).toBe('00000000-0000-4000-8000-000000000000');
  });

  it('falls back to the data context for env() and fails clearly without a host', () => {
    expect(evaluateYaql('env()', { __env: { k: 'v' } })).toEqual({ k: 'v' });
    expect(evaluateJinja('env().k', { __env: { k: 'v' } })).toBe('v');
    expect(() => evaluateYaql('task()', {})).toThrow(ExpressionError);
    expect(() => evaluateYaql('uuid()', {})).toThrow(/uuid\(\) is not available/);
  });

  it('serializes like Python json and PyYAML', () => {
    expect(evaluateYaql('json_dump($)', { a: [1, 'é'], b: null })).toBe(
      '{\n    "a": [\n        1,\n        "\\u00e9"\n    ],\n    "b": null\n}',
    );
    expect(evaluateYaql('json_parse($.s).b', { s: '{"b": [true]}' })).toEqual([true]);
    expect(evaluateYaql('yaml_parse($.s)', { s: 'a: yes\nb: [x, y]\nc: 1.5' })).toEqual({
      a: true,
      b: ['x', 'y'],
      c: 1.5,
    });
    expect(evaluateYaql('yaml_dump($)', { b: [1, 2], a: 'x' })).toBe('a: x\nb:\n- 1\n- 2\n');
    expect(evaluateJinja('_ | json_pp', { a: 1 })).toBe('{\n    "a": 1\n}');
    expect(() => evaluateYaql("json_parse('{nope')", {})).toThrow(ExpressionError);
    expect(() => evaluateYaql('yaml_parse($)', 'a: [unclosed')).toThrow(ExpressionError);
  });

  it('json_pp renders like Mistral (function and filter forms)', () => {
    for (const form of ['json_pp(_)', '_ | json_pp']) {
      expect(evaluateJinja(form, '3')).toBe('"3"');
      expect(evaluateJinja(form, 3)).toBe('3');
      expect(evaluateJinja(form, [1, 2])).toBe('[\n    1,\n    2\n]');
      expect(evaluateJinja(form, { a: 'b' })).toBe('{\n    "a": "b"\n}');
      expect(evaluateJinja(form, 'Mistral\nis\nawesome')).toBe('"Mistral\nis\nawesome"');
    }
    expect(evaluateYaql('json_pp($)', { a: 'b' })).toBe('{\n    "a": "b"\n}');
  });

  it('Mistral functions work as Jinja filters, the piped value being the context', () => {
    const { host, calls } = fakeHost();
    expect(evaluateJinja('_ | env', { __env: 'some' })).toBe('some');
    expect(evaluateJinja('(_ | task("fetch")).id', {}, host)).toBe('t1');
    // attr() is getattr() only, as in Jinja2: a dict's keys are not attributes
    expect(() => evaluateJinja('_ | task("fetch") | attr("id")', {}, host)).toThrow(
      "'dict object' has no attribute 'id'",
    );
    expect(evaluateJinja('(_ | tasks()) | length', {}, host)).toBe(2);
    expect(evaluateJinja('_ | uuid', '3', host)).toBe('00000000-0000-4000-8000-000000000000');
    expect(evaluateJinja('_ | executions(state="RUNNING") | length', {}, host)).toBe(1);
    expect(calls).toContainEqual([
      'executions',
      { id: null, rootExecutionId: null, state: 'RUNNING', fromTime: null, toTime: null },
    ]);
  });

  it('lets typed host errors through and wraps the others', () => {
    const down: ExpressionHost = {
      task: () => {
        throw new TransientError('database unavailable');
      },
      tasks: () => {
        throw new Error('raw failure');
      },
    };
    expect(() => evaluateYaql('task()', {}, down)).toThrow(TransientError);
    expect(() => evaluateJinja('task()', {}, down)).toThrow(TransientError);
    expect(() => evaluate('x <% task() %>', {}, down)).toThrow(TransientError);
    expect(() => evaluateYaql('tasks()', {}, down)).toThrow(ExpressionError);
    expect(() => evaluateYaql('tasks()', {}, down)).toThrow('raw failure');
  });

  it('does not resolve YAML anchors and aliases (billion laughs): both are plain text, as in mistral.utils.safe_yaml', () => {
    // expected values from the reference loader (tools/gen-registry.py's _SafeLoader)
    expect(evaluateYaql('yaml_parse($)', 'a: &x foo\nb: *x\n')).toEqual({ a: '&x foo', b: '*x' });
    const bomb =
      'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n';
    const parsed = evaluateYaql('yaml_parse($)', bomb) as { a: unknown; c: unknown[] };
    expect(parsed.a).toBe('&a [x,x,x,x,x,x,x,x,x]');
    expect(parsed.c).toEqual(Array(9).fill('*b'));
    expect(evaluateYaql('yaml_parse($)', 'k: &a v w\n*b: 1\nl: [*c, &d e]\nm: @x y')).toEqual({
      k: '&a v w',
      '*b': 1,
      l: ['*c', '&d e'],
      m: '@x y',
    });
    expect(evaluateYaql('yaml_parse($)', 'k: &a v # c\nz: *q  \n')).toEqual({ k: '&a v', z: '*q' });
    expect(evaluateYaql('yaml_parse($)', '{a: &b c, d: *e}')).toEqual({ a: '&b c', d: '*e' });
  });
});
