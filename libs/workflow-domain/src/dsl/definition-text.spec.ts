import {
  actionInputString,
  dumpYaml,
  renderInputString,
  workbookMemberText,
  workflowInterface,
} from './definition-text';
import { type InputParameter } from './model';

const req = (name: string): InputParameter => ({ name, required: true });
const opt = (name: string, value: unknown): InputParameter => ({ name, required: false, default: value });

describe('renderInputString (workflow input as the API shows it)', () => {
  it.each<[InputParameter[], string]>([
    [[], ''],
    [[req('a')], 'a'],
    [[req('a'), opt('b', '2'), opt('c', null)], 'a, b="2", c="None"'],
    [[opt('n', 2)], 'n="2"'],
    [[opt('d', { k: 'v' })], `d="{'k': 'v'}"`],
    [[opt('l', [1, 'x', true])], `l="[1, 'x', True]"`],
    [[opt('f', false)], 'f="False"'],
    [[opt('e', '')], 'e=""'],
    [[opt('x', 1.5)], 'x="1.5"'],
  ])('%j', (input, expected) => {
    expect(renderInputString(input)).toBe(expected);
  });
});

describe('workflowInterface', () => {
  it('lists the input as written and the output keys', () => {
    expect(workflowInterface({ input: [req('a'), opt('b', 1)], output: { x: 1, y: 2 } })).toEqual({
      input: ['a', { b: 1 }],
      output: ['x', 'y'],
    });
    expect(workflowInterface({ input: [] })).toEqual({ input: [], output: [] });
  });
});

describe('actionInputString', () => {
  it('uses JSON defaults and null when nothing is declared', () => {
    expect(actionInputString({ input: [req('a'), opt('b', 'x'), opt('c', null), opt('d', [1])] })).toBe(
      'a, b="x", c=null, d=[1]',
    );
    expect(actionInputString({ input: [] })).toBeNull();
  });
});

describe('dumpYaml (PyYAML safe_dump style)', () => {
  it('matches what PyYAML writes for a typical workflow', () => {
    // Expected text produced by PyYAML 6 safe_dump(sort_keys=False) on the same data.
    const data = {
      version: '2.0',
      wf: {
        description: 'Line one: two',
        input: [
          'a',
          { b: 2 },
          { c: null },
          { d: 'yes' },
          { e: '1.5' },
          { f: [1, 'x'] },
          { g: {} },
          { h: true },
        ],
        vars: { s: '{{ _.x }}', q: "it's", n: '@x', p: '*x' },
        tasks: {
          t1: {
            action: 'std.echo output=<% $.a %>',
            publish: { x: '<% task().result %>' },
            'on-success': ['t2', { t3: '<% $.x > 1 %>' }],
          },
        },
      },
    };
    expect(dumpYaml(data)).toBe(
      [
        "version: '2.0'",
        'wf:',
        "  description: 'Line one: two'",
        '  input:',
        '  - a',
        '  - b: 2',
        '  - c: null',
        "  - d: 'yes'",
        "  - e: '1.5'",
        '  - f:',
        '    - 1',
        '    - x',
        '  - g: {}',
        '  - h: true',
        '  vars:',
        "    s: '{{ _.x }}'",
        "    q: it's",
        "    n: '@x'",
        "    p: '*x'",
        '  tasks:',
        '    t1:',
        '      action: std.echo output=<% $.a %>',
        '      publish:',
        '        x: <% task().result %>',
        '      on-success:',
        '      - t2',
        '      - t3: <% $.x > 1 %>',
        '',
      ].join('\n'),
    );
  });

  it('escapes non-ASCII text and quotes multi-line text as PyYAML does', () => {
    // PyYAML 6 safe_dump of the same map.
    expect(
      dumpYaml({
        m: 'multi\nline',
        c: 'a\u0001b',
        u: 'h\u00e9llo',
        'k\u00e9': 1,
        cy: '\u0439',
        em: '\u{1F600}',
      }),
    ).toBe(
      'm: \'multi\n\n  line\'\nc: "a\\x01b"\nu: "h\\xE9llo"\n"k\\xE9": 1\ncy: "\\u0439"\nem: "\\U0001F600"\n',
    );
  });

  it('uses PyYAML short escapes', () => {
    expect(dumpYaml({ a: 'x\u00a0y', b: 'del\u007f', c: 'ls\u2028' })).toBe(
      'a: "x\\_y"\nb: "del\\x7F"\nc: "ls\\L"\n',
    );
  });

  it('quotes strings that YAML 1.1 would read as other types', () => {
    expect(dumpYaml({ a: 'on', b: '017', c: '1:30', d: '~', e: '2024-01-01' })).toBe(
      "a: 'on'\nb: '017'\nc: '1:30'\nd: '~'\ne: '2024-01-01'\n",
    );
  });
});

describe('workbookMemberText (Mistral cuts member definitions from the workbook text)', () => {
  const text = [
    "version: '2.0'",
    'name: wb',
    'workflows:',
    '  first:',
    '    # leading comment',
    '    tasks:',
    '',
    '      t1:',
    '        action: std.noop',
    '# column-zero comment',
    '  second:',
    '    tasks:',
    '      t1: {action: std.noop}',
    'actions:',
    '  act:',
    '    base: std.noop',
    '',
  ].join('\n');

  it('cuts a workflow up to the next sibling', () => {
    expect(workbookMemberText(text, 'workflows', 'first')).toBe(
      'first:\n  # leading comment\n  tasks:\n\n    t1:\n      action: std.noop\n# column-zero comment\n',
    );
  });

  it('cuts the last workflow up to the next section', () => {
    expect(workbookMemberText(text, 'workflows', 'second')).toBe(
      'second:\n  tasks:\n    t1: {action: std.noop}\n',
    );
  });

  it('cuts an action', () => {
    expect(workbookMemberText(text, 'actions', 'act')).toBe('act:\n  base: std.noop\n');
  });

  it('gives up on members it cannot find', () => {
    expect(workbookMemberText(text, 'actions', 'nope')).toBeUndefined();
    expect(workbookMemberText('name: wb\n', 'workflows', 'first')).toBeUndefined();
  });
});
