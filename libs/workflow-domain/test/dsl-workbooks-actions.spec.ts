import { actionInputString, parseActions, parseWorkbook, type DslIssueKind } from '../src';
import { issuesOf, y } from './dsl-test-support';

type Row = [title: string, text: string, path: string, message: string, kind?: DslIssueKind];
const norm = (rows: Row[]) => rows.map(([a, b, c, d, e]) => [a, b, c, d, e ?? 'schema'] as const);

const WB = "version: '2.0'\nname: wb\n";
const WF_OK = 'workflows:\n  wf1:\n    tasks:\n      t1:\n        action: std.noop\n';

const workbookRows: Row[] = [
  ['workbook is a list', '- a\n', '', "is not of type 'object'"],
  ['workbook without name', `version: '2.0'\n${WF_OK}`, '', "'name' is a required property"],
  ['workbook name empty', `version: '2.0'\nname: ''\n${WF_OK}`, 'name', "'' is too short"],
  ['workbook name a number', `version: '2.0'\nname: 5\n${WF_OK}`, 'name', "5 is not of type 'string'"],
  [
    'workbook name with space',
    `version: '2.0'\nname: my wb\n${WF_OK}`,
    'name',
    'must not contain spaces',
    'semantic',
  ],
  ['workbook without version', `name: wb\n${WF_OK}`, '', "'version' is a required property"],
  ['workbook version 1.0', `version: '1.0'\nname: wb\n${WF_OK}`, 'version', '1.0', 'version'],
  ['workbook unknown key', `${WB}workflow:\n  wf1: {}\n`, 'workflow', "('workflow' was unexpected)"],
  ['workbook workflows a list', `${WB}workflows: [wf1]\n`, 'workflows', "is not of type 'object'"],
  ['workbook workflows empty', `${WB}workflows: {}\n`, 'workflows', 'does not have enough properties'],
  ['workbook actions empty', `${WB}actions: {}\n`, 'actions', 'does not have enough properties'],
  [
    'workbook member name with a dot',
    `${WB}workflows:\n  a.b:\n    tasks:\n      t1: {action: std.noop}\n`,
    'workflows.a.b',
    "does not match '^[\\w-]+$'",
  ],
  [
    'workbook member version',
    `${WB}workflows:\n  version: '3.0'\n  wf1:\n    tasks:\n      t1: {action: std.noop}\n`,
    'workflows.version',
    '3.0',
    'version',
  ],
  ['workbook description', `${WB}description: [x]\n${WF_OK}`, 'description', "is not of type 'string'"],
  ['workbook tags', `${WB}tags: [a, a]\n${WF_OK}`, 'tags', 'non-unique'],
  [
    'workbook workflow transition',
    `${WB}workflows:\n  wf1:\n    tasks:\n      t1:\n        on-success: t2\n`,
    'workflows.wf1.tasks.t1.on-success',
    "Task 't2' not found.",
    'semantic',
  ],
  [
    'workbook workflow unknown key',
    `${WB}workflows:\n  wf1:\n    tasks:\n      t1:\n        actoin: x\n`,
    'workflows.wf1.tasks.t1.actoin',
    "('actoin' was unexpected)",
  ],
  [
    'workbook workflow not a map',
    `${WB}workflows:\n  wf1: [t1]\n`,
    'workflows.wf1',
    "is not of type 'object'",
  ],
  [
    'workbook action without base',
    `${WB}actions:\n  a1:\n    input: [x]\n`,
    'actions.a1',
    "'base' is a required property",
  ],
  [
    'workbook action unknown key',
    `${WB}actions:\n  a1:\n    base: std.noop\n    bass: 1\n`,
    'actions.a1.bass',
    "('bass' was unexpected)",
  ],
  [
    'workbook action expression',
    `${WB}actions:\n  a1:\n    base: std.echo\n    base-input:\n      output: <% $.( %>\n`,
    'actions.a1.base-input.output',
    'Invalid YAQL expression',
    'expression',
  ],
];

const actionRows: Row[] = [
  ['action list without version', 'a1:\n  base: std.noop\n', '', "'version' is a required property"],
  ['action list version', "version: '2.1'\na1:\n  base: std.noop\n", 'version', '2.1', 'version'],
  ['action list without actions', "version: '2.0'\n", '', 'At least one item'],
  [
    'action without base',
    "version: '2.0'\na1:\n  input: [x]\n",
    'actions.a1',
    "'base' is a required property",
  ],
  ['action base empty', "version: '2.0'\na1:\n  base: ''\n", 'actions.a1.base', "'' is too short"],
  [
    'action base a list',
    "version: '2.0'\na1:\n  base: [std.noop]\n",
    'actions.a1.base',
    "is not of type 'string'",
  ],
  [
    'action unknown key',
    "version: '2.0'\na1:\n  bse: std.noop\n  base: std.noop\n",
    'actions.a1.bse',
    "('bse' was unexpected)",
  ],
  [
    'action base-input a list',
    "version: '2.0'\na1:\n  base: std.noop\n  base-input: [a]\n",
    'actions.a1.base-input',
    "is not of type 'object'",
  ],
  [
    'action base-input empty',
    "version: '2.0'\na1:\n  base: std.noop\n  base-input: {}\n",
    'actions.a1.base-input',
    'does not have enough properties',
  ],
  [
    'action input not a list',
    "version: '2.0'\na1:\n  base: std.noop\n  input: x\n",
    'actions.a1.input',
    "is not of type 'array'",
  ],
  [
    'action input duplicate',
    "version: '2.0'\na1:\n  base: std.noop\n  input: [x, x]\n",
    'actions.a1.input[1]',
    'duplicate input parameter',
  ],
  [
    'action output expression',
    "version: '2.0'\na1:\n  base: std.noop\n  output: <% $.[ %>\n",
    'actions.a1.output',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'action nested output expression',
    "version: '2.0'\na1:\n  base: std.noop\n  output:\n    r: [<% $.( %>]\n",
    'actions.a1.output.r[0]',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'action base inline expression',
    "version: '2.0'\na1:\n  base: std.echo output=<% $.( %>\n",
    'actions.a1.base.output',
    'Invalid YAQL expression',
    'expression',
  ],
  [
    'action base not a command',
    "version: '2.0'\na1:\n  base: =x y\n",
    'actions.a1.base',
    'Invalid action/workflow task property',
  ],
  ['action is a string', "version: '2.0'\na1: std.noop\n", 'actions.a1', "is not of type 'object'"],
  ['action name read as boolean', "version: '2.0'\noff:\n  base: std.noop\n", 'actions.false', 'boolean'],
  [
    'action name with space',
    "version: '2.0'\nmy action:\n  base: std.noop\n",
    'actions.my action',
    'must not contain spaces',
    'semantic',
  ],
  [
    'action description empty',
    "version: '2.0'\na1:\n  base: std.noop\n  description: ''\n",
    'actions.a1.description',
    "'' is too short",
  ],
  [
    'action tags',
    "version: '2.0'\na1:\n  base: std.noop\n  tags: x\n",
    'actions.a1.tags',
    "is not of type 'array'",
  ],
];

describe('parseWorkbook rejects invalid workbooks', () => {
  it.each(norm(workbookRows))('%s', (_t, text, path, message, kind) => {
    const [first] = issuesOf(() => parseWorkbook(text));
    expect(first).toMatchObject({ path, kind });
    expect(first!.message).toContain(message);
  });
});

describe('parseActions rejects invalid action lists', () => {
  it.each(norm(actionRows))('%s', (_t, text, path, message, kind) => {
    const [first] = issuesOf(() => parseActions(text));
    expect(first).toMatchObject({ path, kind });
    expect(first!.message).toContain(message);
  });
});

describe('valid workbooks and actions', () => {
  it('prefixes member names and keeps member workflow types', () => {
    const wb = parseWorkbook(
      y`
        version: 2.0
        name: wb
        workflows:
          version: '2.0'
          direct_one:
            tasks:
              t1:
                action: act x=1
          reverse-one:
            type: reverse
            tasks:
              t1: {action: std.noop}
        actions:
          act:
            base: std.echo output=<% $.x %>
            input: [x]
      `,
    );
    expect(wb.workflows.map((w) => [w.name, w.type])).toEqual([
      ['wb.direct_one', 'direct'],
      ['wb.reverse-one', 'reverse'],
    ]);
    expect(wb.actions[0]).toMatchObject({
      name: 'wb.act',
      base: 'std.echo',
      baseInput: { output: '<% $.x %>' },
    });
  });

  it('accepts a workbook with neither workflows nor actions', () => {
    expect(parseWorkbook("version: '2.0'\nname: empty\n")).toMatchObject({
      name: 'empty',
      workflows: [],
      actions: [],
    });
  });

  it('parses an action list with every key', () => {
    const actions = parseActions(
      y`
        version: '2.0'
        greet:
          description: Greets
          tags: [a]
          base: std.echo output="Hello <% $.name %>" delay=1
          base-input:
            output: overridden by inline
            extra: <% $.name %>
          input:
            - name
            - loud: false
            - opts: {k: v}
          output:
            text: <% $ %>
        bare:
          base: std.noop
        nulled:
          base: std.noop
          output:
      `,
    );
    expect(actions.map((a) => a.name)).toEqual(['greet', 'bare', 'nulled']);
    expect(actions[0]).toEqual({
      name: 'greet',
      description: 'Greets',
      tags: ['a'],
      base: 'std.echo',
      baseInput: { output: 'Hello <% $.name %>', extra: '<% $.name %>', delay: 1 },
      input: [
        { name: 'name', required: true },
        { name: 'loud', required: false, default: false },
        { name: 'opts', required: false, default: { k: 'v' } },
      ],
      hasOutput: true,
      output: { text: '<% $ %>' },
    });
    expect(actionInputString(actions[0]!)).toBe('name, loud=false, opts={"k": "v"}');
    expect(actions[1]).toMatchObject({ hasOutput: false, input: [] });
    expect(actionInputString(actions[1]!)).toBeNull();
    expect(actions[2]).toMatchObject({ hasOutput: true, output: null });
  });

  it('skips semantic checks of workbooks when asked', () => {
    const text = `${WB}workflows:\n  wf1:\n    tasks:\n      t1:\n        on-success: t2\n`;
    expect(() => parseWorkbook(text)).toThrow(/Task 't2' not found/);
    expect(parseWorkbook(text, { validate: false }).workflows).toHaveLength(1);
  });
});
