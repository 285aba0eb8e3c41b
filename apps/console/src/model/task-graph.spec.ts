import { parse } from 'yaml';
import { taskGraphOf } from './task-graph';

describe('taskGraphOf', () => {
  it('draws every transition form of a direct workflow and leaves engine commands out', () => {
    const g = taskGraphOf(
      parse(`
version: '2.0'
wf:
  task-defaults:
    retry: {count: 2, delay: 0}
  tasks:
    a:
      action: std.noop
      on-success:
        - b
        - c: <% $.go %>
        - fail: <% $.bad %>
      on-error: d
    b:
      action: std.echo output=1
      with-items: x in <% [1, 2] %>
      on-complete:
        next: [d]
        publish: {y: 1}
    c:
      workflow: child_wf param=1
      on-success: [succeed]
    d:
      join: all
`),
    );
    expect(g.workflowName).toBe('wf');
    expect(g.type).toBe('direct');
    expect(g.tasks.map((t) => [t.name, t.action, t.workflow, t.withItems, t.retry, t.join])).toEqual([
      ['a', 'std.noop', null, false, true, false],
      ['b', 'std.echo', null, true, true, false],
      ['c', null, 'child_wf', false, true, false],
      ['d', null, null, false, true, true],
    ]);
    expect(g.edges).toEqual([
      { from: 'a', to: 'b', kind: 'on-success', condition: null },
      { from: 'a', to: 'c', kind: 'on-success', condition: '<% $.go %>' },
      { from: 'a', to: 'd', kind: 'on-error', condition: null },
      { from: 'b', to: 'd', kind: 'on-complete', condition: null },
    ]);
  });

  it('draws requires of a reverse workflow from the required task to the one that needs it', () => {
    const g = taskGraphOf(
      parse(`
version: '2.0'
rev:
  type: reverse
  tasks:
    one: {action: std.noop}
    two: {action: std.noop, requires: one}
    three: {action: std.noop, requires: [one, two]}
`),
    );
    expect(g.type).toBe('reverse');
    expect(g.edges.map((e) => `${e.from}->${e.to}:${e.kind}`)).toEqual([
      'one->two:requires',
      'one->three:requires',
      'two->three:requires',
    ]);
  });

  it('picks the named workflow of a workbook, by its short name', () => {
    const g = taskGraphOf(
      parse(
        `version: '2.0'\nname: wb\nworkflows:\n  x: {tasks: {t1: {action: std.noop}}}\n  y: {tasks: {t2: {action: std.noop}}}\n`,
      ),
      'wb.y',
    );
    expect(g.workflowName).toBe('y');
    expect(g.tasks.map((t) => t.name)).toEqual(['t2']);
  });

  it('refuses a definition without tasks', () => {
    expect(() => taskGraphOf(parse(`version: '2.0'\nwf: {input: [a]}\n`))).toThrow(
      'The definition has no workflow with tasks.',
    );
    expect(() => taskGraphOf('text')).toThrow('not a YAML mapping');
  });
});
