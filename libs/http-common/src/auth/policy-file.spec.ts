import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../config/config';
import { loadPolicyOverrides } from './policy-file';

describe('loadPolicyOverrides', () => {
  const dir = mkdtempSync(join(tmpdir(), 'policy-'));
  it('reads rules from a YAML file', () => {
    const path = join(dir, 'ok.yaml');
    writeFileSync(path, '"workflows:publicize": "@"\n');
    expect(loadPolicyOverrides('workflow-api', 'WORKFLOW_API_POLICY_FILE', path)).toEqual({
      'workflows:publicize': '@',
    });
  });
  it('no path means no overrides', () => {
    expect(loadPolicyOverrides('x', 'X', undefined)).toEqual({});
  });
  it('names the variable for a missing file', () => {
    expect(() => loadPolicyOverrides('x', 'VOLUME_API_POLICY_FILE', join(dir, 'nope.yaml'))).toThrow(
      ConfigError,
    );
    expect(() => loadPolicyOverrides('x', 'VOLUME_API_POLICY_FILE', join(dir, 'nope.yaml'))).toThrow(
      /VOLUME_API_POLICY_FILE: cannot read .*ENOENT/,
    );
  });
  it('names the variable and the rule for a bad rule', () => {
    const path = join(dir, 'bad.yaml');
    writeFileSync(path, '"volume:create": "role:a or"\n');
    expect(() => loadPolicyOverrides('x', 'VOLUME_API_POLICY_FILE', path)).toThrow(
      /VOLUME_API_POLICY_FILE: .*volume:create/,
    );
  });
});
