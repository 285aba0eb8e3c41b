import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  DslValidationError,
  dumpYaml,
  parseActions,
  parseWorkbook,
  parseWorkflows,
  validateDefinition,
} from '../src';

/** Whatever the text, parsing either succeeds or throws a DslValidationError (never a crash). */
const parsesOrRejects = (text: string): void => {
  for (const parse of [parseWorkflows, parseWorkbook, parseActions] as const) {
    try {
      parse(text);
    } catch (e) {
      if (!(e instanceof DslValidationError)) throw e;
      expect(e.issues.length).toBeGreaterThan(0);
      expect(e.message.length).toBeGreaterThan(0);
    }
  }
};

const FIXTURES = join(__dirname, '../src/dsl/__fixtures__');
const fixtures = readdirSync(FIXTURES).map((f) => readFileSync(join(FIXTURES, f), 'utf8'));

const KEYS = [
  'version',
  'name',
  'tasks',
  'type',
  'input',
  'output',
  'vars',
  'task-defaults',
  'action',
  'workflow',
  'publish',
  'on-success',
  'on-error',
  'on-complete',
  'join',
  'requires',
  'with-items',
  'retry',
  'count',
  'delay',
  'timeout',
  'workflows',
  'actions',
  'base',
  'base-input',
  'next',
  'branch',
  'global',
  't1',
  't2',
  'wf',
];
const scalar = fc.oneof(
  fc.constantFrom(
    '2.0',
    'all',
    'std.noop',
    'std.echo output=<% $.x %>',
    't1',
    'fail msg="x"',
    'a in [1, 2]',
    '<% $.( %>',
    '{{ _.a }}',
    'reverse',
    '',
  ),
  fc.integer({ min: -3, max: 5 }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 12 }),
);
const tree = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('list'), tie('map')),
  list: fc.array(tie('node'), { maxLength: 4 }),
  map: fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 6 })), tie('node'), {
    maxKeys: 5,
  }),
})).node;

describe('fuzz: parsing never crashes', () => {
  it('random structures dumped as YAML', () => {
    fc.assert(
      fc.property(tree, (value) => {
        parsesOrRejects(dumpYaml(value));
        parsesOrRejects(dumpYaml({ version: '2.0', wf: value }));
        parsesOrRejects(dumpYaml({ version: '2.0', wf: { tasks: { t1: value } } }));
      }),
      { numRuns: 250, seed: 20261123 },
    );
  });

  it('mutated fixtures', () => {
    const mutation = fc.tuple(
      fc.nat(fixtures.length - 1),
      fc.nat(),
      fc.nat({ max: 8 }),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(mutation, ([which, at, cut, insert]) => {
        const text = fixtures[which]!;
        const pos = at % (text.length + 1);
        parsesOrRejects(text.slice(0, pos) + insert + text.slice(pos + cut));
      }),
      { numRuns: 400, seed: 42 },
    );
  });

  it('arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        parsesOrRejects(text);
      }),
      { numRuns: 200, seed: 7 },
    );
  });

  it('deep nesting is a validation error or a model, never a stack overflow', () => {
    for (const n of [50, 3000]) {
      parsesOrRejects(
        `version: '2.0'\nwf:\n  vars:\n    x: ${'['.repeat(n)}${']'.repeat(n)}\n  tasks:\n    t1: {action: std.noop}\n`,
      );
      let block = "version: '2.0'\nwf:\n  vars:\n    x:\n";
      for (let i = 0; i < n / 10; i++) block += `${' '.repeat(6 + i * 2)}- \n`;
      parsesOrRejects(`${block}  tasks:\n    t1: {action: std.noop}\n`);
    }
  });

  it('validateDefinition returns issues instead of throwing', () => {
    expect(validateDefinition('workflows', 'version: 3\nwf: {}\n')[0]!.kind).toBe('version');
    expect(validateDefinition('workbook', "version: '2.0'\nname: wb\n")).toEqual([]);
    expect(validateDefinition('actions', 'a: [')[0]!.kind).toBe('syntax');
  });
});
