import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pyYamlProblem } from '../src/pyyaml-errors';
import { fromHost } from '../src/values';
import { evaluateYaqlNative } from '../src/yaql/engine';

/**
 * PyYAML's refusals (tools/gen-yaml-errors.py, from Debian's python3-yaml with Mistral's loader):
 * random documents, mostly malformed, each refused with PyYAML's exact words and marks, or read
 * (null). yaml_parse carries the refusal into the expression's error.
 */
const golden = JSON.parse(readFileSync(join(__dirname, 'golden', 'yaml-errors.json'), 'utf8')) as {
  cases: Array<{ doc: string; error: string | null }>;
};

describe('PyYAML refusals', () => {
  it('covers both refused and accepted documents', () => {
    const refused = golden.cases.filter((c) => c.error !== null).length;
    expect(refused).toBeGreaterThan(1000);
    expect(golden.cases.length - refused).toBeGreaterThan(300);
  });

  it.each(golden.cases.map((c, i) => [i, JSON.stringify(c.doc), c] as const))('#%i %s', (_i, _doc, c) => {
    const problem = pyYamlProblem(c.doc);
    expect(problem && `${problem.type}: ${problem.message}`).toBe(c.error);
    if (c.error === null) return;
    let message = '';
    try {
      evaluateYaqlNative('yaml_parse($.t)', fromHost({ t: c.doc }), {});
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`error=${c.error.replace(/^\w+: /, '')}]`);
  });
});
