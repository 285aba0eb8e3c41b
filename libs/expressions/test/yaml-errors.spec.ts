import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromHost } from '../src/values';
import { evaluateYaqlNative } from '../src/yaql/engine';

/**
 * PyYAML's refusals (tools/gen-yaml-errors.py, from Debian's python3-yaml with Mistral's loader):
 * random documents, mostly malformed, each refused with PyYAML's words and marks, or read (null).
 * yaml_parse must give the same refusal (or read the document) except for the documents listed in
 * yaml-errors-differences.json, each with its reason (README: "yaml_parse refusals"); a listed
 * document must still differ, so that a fix forces its removal from the list.
 */
const golden = JSON.parse(readFileSync(join(__dirname, 'golden', 'yaml-errors.json'), 'utf8')) as {
  cases: Array<{ doc: string; error: string | null }>;
};
const differences = JSON.parse(readFileSync(join(__dirname, 'yaml-errors-differences.json'), 'utf8')) as {
  reasons: Record<string, string>;
  documents: Record<string, string>;
};

function refusal(doc: string): string | null {
  try {
    evaluateYaqlNative('yaml_parse($.t)', fromHost({ t: doc }), {});
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

describe('PyYAML refusals', () => {
  it('covers both refused and accepted documents, and lists only known reasons', () => {
    const refused = golden.cases.filter((c) => c.error !== null).length;
    expect(refused).toBeGreaterThan(1000);
    expect(golden.cases.length - refused).toBeGreaterThan(300);
    const docs = new Set(golden.cases.map((c) => c.doc));
    for (const [doc, reason] of Object.entries(differences.documents)) {
      expect(docs.has(doc)).toBe(true);
      expect(Object.keys(differences.reasons)).toContain(reason);
    }
  });

  it.each(golden.cases.map((c, i) => [i, JSON.stringify(c.doc), c] as const))('#%i %s', (_i, _doc, c) => {
    const message = refusal(c.doc);
    const same =
      c.error === null
        ? message === null
        : message !== null && message.includes(`error=${c.error.replace(/^\w+: /, '')}]`);
    expect(same).toBe(!(c.doc in differences.documents));
  });
});
