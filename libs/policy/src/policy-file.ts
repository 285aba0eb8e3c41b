import { parse } from 'yaml';
import { type PolicyRules, parsePolicyRules } from './enforcer';
import { PolicySyntaxError, parseLegacyRule, parseRule } from './rule';

/**
 * Parse a deployment's policy file (oslo.policy YAML, or JSON), checking every rule's syntax so a
 * bad file is refused when it is read. `source` names it in errors.
 */
export function parsePolicyFile(text: string, source: string): PolicyRules {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new PolicySyntaxError(
      `Policy file ${source}: not valid YAML (${(err as Error).message.split('\n', 1)[0]})`,
    );
  }
  const rules = parsePolicyRules(doc, source);
  for (const [name, rule] of Object.entries(rules)) {
    if (typeof rule === 'string') parseRule(rule, name);
    else parseLegacyRule(rule, name);
  }
  return rules;
}
