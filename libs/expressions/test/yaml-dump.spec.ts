import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pyYamlDump } from '../src/pyyaml';
import { PyDateTime, PyFloat } from '../src/values';

/**
 * yaml_dump against PyYAML 6 (tools/gen-yaml-dump.py, Debian's python3-yaml,
 * `yaml.dump(v, Dumper=SafeDumper, default_flow_style=False)` as Mistral calls it): the YAML 1.1
 * implicit types that force quotes, the choice between plain, single and double quotes, escapes,
 * folding at 80 columns, simple and `?` keys, key order and the layout of nested collections.
 */
type Encoded =
  | null
  | boolean
  | number
  | string
  | Encoded[]
  | { float: string }
  | { map: Array<[Encoded, Encoded]> }
  | { datetime: [number, number] };

const golden = JSON.parse(readFileSync(join(__dirname, 'golden', 'yaml-dump.json'), 'utf8')) as {
  cases: Array<{ value: Encoded; yaml: string }>;
};

function decode(v: Encoded): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(decode);
  if ('float' in v) {
    const n = v.float === 'inf' ? Infinity : v.float === '-inf' ? -Infinity : Number(v.float);
    return Number.isInteger(n) ? new PyFloat(n) : n;
  }
  if ('map' in v) return new Map(v.map.map(([k, x]) => [decode(k), decode(x)]));
  return new PyDateTime(v.datetime[0], v.datetime[1]);
}

describe('yaml_dump against PyYAML', () => {
  it('has fixtures', () => {
    expect(golden.cases.length).toBeGreaterThan(5000);
  });

  it.each(golden.cases.map((c, i) => [i, c] as const))('#%i', (_i, c) => {
    expect(pyYamlDump(decode(c.value))).toBe(c.yaml);
  });
});
