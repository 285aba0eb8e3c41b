import {
  actionInputString,
  parseActions,
  parseWorkbook,
  parseWorkflows,
  renderInputString,
  workbookMemberDefinitions,
  workflowInterface,
} from '../src';

/**
 * Outputs observed on the reference server (Mistral 15 / Zed, python-mistralclient upload of the same text),
 * kept as fixtures so that the definitions API shows what real clients expect.
 */
describe('facts observed on the reference implementation', () => {
  it('workflow input string, interface and re-serialised definitions of a two-workflow upload', () => {
    const text =
      "version: '2.0'\nwf_in1:\n  input: [a, {b: 2}, {c: null}, {d: {k: v}}, {f: yes}, {h: \"it's\"}]\n  tasks:\n    t1: {action: std.noop}\n" +
      'wf_in2:\n  output: {x: 1, y: 2}\n  tasks:\n    t1:\n      action: std.echo output="a b" n=1.5 w=word\n      on-success:\n        - t2: <% $.x %>\n    t2:\n      action: std.noop\n';
    const { workflows, definitions } = parseWorkflows(text);
    const [one, two] = workflows;
    expect(renderInputString(one!.input)).toBe(`a, b="2", c="None", d="{'k': 'v'}", f="True", h="it's"`);
    expect(workflowInterface(one!)).toEqual({
      input: ['a', { b: 2 }, { c: null }, { d: { k: 'v' } }, { f: true }, { h: "it's" }],
      output: [],
    });
    expect(renderInputString(two!.input)).toBe('');
    expect(workflowInterface(two!)).toEqual({ input: [], output: ['x', 'y'] });
    expect(definitions.wf_in1).toBe(
      "version: '2.0'\nwf_in1:\n  input:\n  - a\n  - b: 2\n  - c: null\n  - d:\n      k: v\n  - f: true\n  - h: it's\n  tasks:\n    t1:\n      action: std.noop\n",
    );
    expect(definitions.wf_in2).toBe(
      'version: \'2.0\'\nwf_in2:\n  output:\n    x: 1\n    y: 2\n  tasks:\n    t1:\n      action: std.echo output="a b" n=1.5 w=word\n      on-success:\n      - t2: <% $.x %>\n    t2:\n      action: std.noop\n',
    );
  });

  it('shows integral float defaults as floats', () => {
    const text =
      "version: '2.0'\nwf:\n  input: [{e: 1.0}, {n: {k: [2., 3]}}, {i: 1}, {s: '1.0'}]\n  tasks:\n    t1: {action: std.noop}\n";
    const [wf] = parseWorkflows(text).workflows;
    // Mistral 15 showed e="1.0" for `{e: 1.0}`; the other entries follow Python str() the same way.
    expect(renderInputString(wf!.input)).toBe(`e="1.0", n="{'k': [2.0, 3]}", i="1", s="1.0"`);
    expect(JSON.parse(JSON.stringify(wf!.input))).toEqual(wf!.input);
  });

  it('keeps an unquoted float version a float when re-serialising', () => {
    const { definitions } = parseWorkflows(
      'version: 2.0\nfv1:\n  tasks:\n    t1: {action: std.noop}\nfv2:\n  tasks:\n    t1: {action: std.noop}\n',
    );
    expect(definitions.fv1).toBe('version: 2.0\nfv1:\n  tasks:\n    t1:\n      action: std.noop\n');
    expect(definitions.fv2).toBe('version: 2.0\nfv2:\n  tasks:\n    t1:\n      action: std.noop\n');
    const deep = parseWorkflows(
      "version: '2.0'\na:\n  vars: {x: 1.0, y: [2.50, 3]}\n  tasks:\n    t1: {action: std.noop}\nb:\n  tasks:\n    t1: {action: std.noop}\n",
    );
    expect(deep.definitions.a).toBe(
      "version: '2.0'\na:\n  vars:\n    x: 1.0\n    y:\n    - 2.5\n    - 3\n  tasks:\n    t1:\n      action: std.noop\n",
    );
  });

  it('ad-hoc action input strings', () => {
    const actions = parseActions(
      'version: \'2.0\'\nact_a:\n  base: std.echo output="x"\n  input: [p, {q: 5}, {r: "s"}, {t: null}, {u: [1, 2]}]\nact_b:\n  description: B\n  base: std.noop\n',
    );
    expect(actions.map(actionInputString)).toEqual(['p, q=5, r="s", t=null, u=[1, 2]', null]);
    expect(actions.map((a) => a.description ?? null)).toEqual([null, 'B']);
  });

  it('workbook member definitions are cut from the text', () => {
    const text =
      "---\nversion: '2.0'\nname: wbx\n\nworkflows:\n  one:\n    # c\n    tasks:\n      t1:\n        action: std.noop\n\n  two:\n    tasks:\n      t1: {action: std.noop}\nactions:\n  act:\n    base: std.noop\n";
    const wb = parseWorkbook(text);
    const defs = workbookMemberDefinitions(text, wb);
    expect(defs.workflows['wbx.one']).toBe('one:\n  # c\n  tasks:\n    t1:\n      action: std.noop\n');
    expect(defs.actions['wbx.act']).toBe('act:\n  base: std.noop\n');
  });

  it('rejects an empty task map, as the reference does', () => {
    expect(() => parseWorkflows("version: '2.0'\nwf_empty_task:\n  tasks:\n    t1: {}\n")).toThrow(
      /^Invalid DSL: \{\} does not have enough properties \[path=workflows\.wf_empty_task\.tasks\.t1/,
    );
  });
});
