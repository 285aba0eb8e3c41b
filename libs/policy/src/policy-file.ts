import { parse } from 'yaml';
import { type PolicyRules, parsePolicyRules } from './enforcer';
import { PolicySyntaxError } from './rule';

/** Parse a deployment's policy file (oslo.policy YAML, or JSON). `source` names it in errors. */
export function parsePolicyFile(text: string, source: string): PolicyRules {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new PolicySyntaxError(
      `Policy file ${source}: not valid YAML (${(err as Error).message.split('\n', 1)[0]})`,
    );
  }
  return parsePolicyRules(doc, source);
}
