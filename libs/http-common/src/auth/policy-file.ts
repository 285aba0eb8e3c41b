import { readFileSync } from 'node:fs';
import { type PolicyRules, parsePolicyFile } from '@osc/policy';
import { ConfigError } from '../config/config';

/**
 * A deployment's policy overrides (oslo.policy YAML or JSON) read at boot; no path → no
 * overrides. An unreadable or invalid file stops the boot with a ConfigError naming the variable.
 */
export function loadPolicyOverrides(app: string, variable: string, path: string | undefined): PolicyRules {
  if (!path) return {};
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(app, [
      `${variable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    ]);
  }
  try {
    return parsePolicyFile(text, path);
  } catch (err) {
    throw new ConfigError(app, [`${variable}: ${(err as Error).message}`]);
  }
}
