import { pyYamlDump } from './pyyaml';
import { fromHost, PyBigInt, PyDate, PySet, PyTimespan } from './values';

/**
 * yaml_dump's emitter against PyYAML 6 (`yaml.dump(v, Dumper=SafeDumper, default_flow_style=False)`,
 * outputs pinned from the Debian python3-yaml): line folding at 80 columns in plain and quoted
 * scalars, complex keys (`? `), escapes, indentation of nested collections. The registry set
 * (test/registry.spec.ts) covers the YAML 1.1 quoting rules through Mistral's yaml_dump.
 */
const CASES: Array<[unknown, string]> = [
  [
    'word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word ',
    "'word word word word word word word word word word word word word word word word word\n  word word word word word word word word word word word word word '\n",
  ],
  [
    'ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab',
    'ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab\n  ab ab ab ab ab ab ab ab ab ab ab ab\n...\n',
  ],
  [
    'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx y z',
    'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n  y z\n...\n',
  ],
  [
    {
      k: 'word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word ',
    },
    "k: 'word word word word word word word word word word word word word word word word\n  word word word word word word word word word word word word word word '\n",
  ],
  [
    {
      kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk: 1,
    },
    '? kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: 1\n',
  ],
  [{ '': 1 }, "? ''\n: 1\n"],
  [{ 'multi\nline': 'v' }, "? 'multi\n\n  line'\n: v\n"],
  ['tab\tx', '"tab\\tx"\n'],
  ['héllo', '"h\\xE9llo"\n'],
  ['emoji😀', '"emoji\\U0001F600"\n'],
  ['nb sp', '"nb\\_sp"\n'],
  ['---', "'---'\n"],
  ['...x', "'...x'\n"],
  ['a #b', "'a #b'\n"],
  ['a#b', 'a#b\n...\n'],
  ['? q', "'? q'\n"],
  ['?q', '?q\n...\n'],
  ['- x', "'- x'\n"],
  ['-x', '-x\n...\n'],
  ['true\n', "'true\n\n  '\n"],
  [' \n x', '" \\n x"\n'],
  [
    { b: [1, [2, 3], { c: null }], a: { x: [], y: {} } },
    'a:\n  x: []\n  y: {}\nb:\n- 1\n- - 2\n  - 3\n- c: null\n',
  ],
  [
    [[['!x']], '190:20:30.15', 1e-7, 1e16, 0.1, -5, true, null],
    "- - - '!x'\n- '190:20:30.15'\n- 1.0e-07\n- 1.0e+16\n- 0.1\n- -5\n- true\n- null\n",
  ],
  [
    'long text with many words long text with many words long text with many words long text with many words long text with many words long text with many words long text with many words long text with many words  "quoted" and é',
    '"long text with many words long text with many words long text with many words long\\\n  \\ text with many words long text with many words long text with many words long\\\n  \\ text with many words long text with many words  \\"quoted\\" and \\xE9"\n',
  ],
];

describe('pyYamlDump', () => {
  it.each(CASES.map(([v, y], i) => [i, v, y] as const))('#%i %j', (_i, value, expected) => {
    expect(pyYamlDump(fromHost(value))).toBe(expected);
  });

  it('writes ints beyond 2^53 and dates as PyYAML does', () => {
    // yaql's pow(2, 64) is a Python int; yaml_parse('2001-12-14') is a datetime.date
    expect(pyYamlDump(new PyBigInt(18446744073709551616n))).toBe('18446744073709551616\n...\n');
    expect(pyYamlDump(new PyDate(2001, 12, 14))).toBe('2001-12-14\n...\n');
    expect(pyYamlDump(fromHost({ k: [new PyDate(1, 2, 3), new PyBigInt(-(2n ** 70n))] }))).toBe(
      'k:\n- 0001-02-03\n- -1180591620717411303424\n',
    );
  });

  it('refuses a timedelta as SafeDumper does', () => {
    expect(() => pyYamlDump(new PyTimespan(86_400_000_000))).toThrow(
      "('cannot represent an object', datetime.timedelta(days=1))",
    );
  });

  it('refuses a set as SafeDumper does', () => {
    expect(() => pyYamlDump(new PySet([1]))).toThrow(/cannot represent an object/);
  });
});
