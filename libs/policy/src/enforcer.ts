import { ForbiddenError } from '@osc/errors';
import { PolicySyntaxError, type RuleNode, parseLegacyRule, parseRule } from './rule';

/**
 * What a rule may test about the caller (oslo.policy's credentials): `roles` (lower-cased),
 * `user_id`, `project_id`, `is_admin`, domain ids, `system_scope`, `is_admin_project`...
 * Values are compared as Python would print them (`True`, `False`, `None`).
 */
export type Credentials = Readonly<Record<string, unknown>> & { readonly roles: readonly string[] };

/** What the action is about, e.g. `{ project_id: <owner> }`; `%(name)s` in rules reads it (dotted names too). */
export type Target = Readonly<Record<string, unknown>>;

/** Rule name → rule text (or oslo's legacy list form), as in a policy YAML/JSON file. */
export type PolicyRules = Readonly<Record<string, string | unknown[]>>;

export interface PolicyOptions {
  /** Rule evaluated for an action with no rule of its own (oslo's `policy_default_rule`); absent → deny. */
  readonly defaultRule?: string;
  /** The 403 message for a denied action. */
  readonly deniedMessage: (action: string) => string;
}

const MAX_DEPTH = 50;

/** Python's `str()` of a credential value, which is what oslo compares against. */
function pythonString(value: unknown): string {
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (value === null || value === undefined) return 'None';
  return String(value);
}

function lookup(obj: Readonly<Record<string, unknown>>, dotted: string): { found: boolean; value: unknown } {
  if (Object.prototype.hasOwnProperty.call(obj, dotted)) return { found: true, value: obj[dotted] };
  let cur: unknown = obj;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, part))
      return { found: false, value: undefined };
    cur = (cur as Record<string, unknown>)[part];
  }
  return { found: true, value: cur };
}

/** `%(name)s` substitution from the target; null when a name is missing (the check then fails). */
function substitute(match: string, target: Target): string | null {
  let missing = false;
  const out = match.replace(/%\(([^)]+)\)s/g, (_m, name: string) => {
    const v = lookup(target, name);
    if (!v.found) missing = true;
    return pythonString(v.value);
  });
  return missing ? null : out;
}

/** A literal left side (`True`, `'member'`, `42`) compared with the match instead of a credential. */
function literal(key: string): string | undefined {
  if (key === 'True' || key === 'False' || key === 'None') return key;
  if (/^-?\d+(\.\d+)?$/.test(key)) return key;
  const q = /^'(.*)'$|^"(.*)"$/.exec(key);
  return q ? (q[1] ?? q[2]) : undefined;
}

/**
 * An oslo.policy-style enforcer: the service's defaults overlaid by a deployment's rules, parsed
 * once at construction (a bad rule stops the boot with the rule's name). An undefined rule
 * reference evaluates to false; cycles are cut off and deny.
 */
export class PolicyEnforcer {
  private readonly rules = new Map<string, RuleNode>();

  constructor(
    defaults: PolicyRules,
    overrides: PolicyRules = {},
    private readonly options: PolicyOptions,
  ) {
    for (const [name, text] of Object.entries({ ...defaults, ...overrides })) {
      this.rules.set(name, typeof text === 'string' ? parseRule(text, name) : parseLegacyRule(text, name));
    }
  }

  /** The effective rule names (defaults plus overrides). */
  ruleNames(): string[] {
    return [...this.rules.keys()].sort();
  }

  /** Whether `creds` may perform `action` on `target`. */
  check(action: string, target: Target, creds: Credentials): boolean {
    const node =
      this.rules.get(action) ??
      (this.options.defaultRule !== undefined ? this.rules.get(this.options.defaultRule) : undefined);
    if (!node) return false;
    const roles = new Set(creds.roles.map((r) => r.toLowerCase()));
    return this.evaluate(node, target, creds, roles, 0);
  }

  /** Throws a ForbiddenError (403) with the service's message when `check` fails. */
  enforce(action: string, target: Target, creds: Credentials): void {
    if (!this.check(action, target, creds)) throw new ForbiddenError(this.options.deniedMessage(action));
  }

  private evaluate(
    node: RuleNode,
    target: Target,
    creds: Credentials,
    roles: ReadonlySet<string>,
    depth: number,
  ): boolean {
    switch (node.kind) {
      case 'true':
        return true;
      case 'false':
        return false;
      case 'and':
        return node.items.every((n) => this.evaluate(n, target, creds, roles, depth));
      case 'or':
        return node.items.some((n) => this.evaluate(n, target, creds, roles, depth));
      case 'not':
        return !this.evaluate(node.item, target, creds, roles, depth);
      case 'rule': {
        const ref = this.rules.get(node.name);
        if (!ref || depth >= MAX_DEPTH) return false;
        return this.evaluate(ref, target, creds, roles, depth + 1);
      }
      case 'role': {
        const match = substitute(node.match, target);
        return match !== null && roles.has(match.toLowerCase());
      }
      case 'generic': {
        const match = substitute(node.match, target);
        if (match === null) return false;
        const lit = literal(node.key);
        if (lit !== undefined) return lit === match;
        const left = lookup(creds, node.key);
        if (!left.found) return false;
        if (Array.isArray(left.value)) return left.value.map(pythonString).includes(match);
        return pythonString(left.value) === match;
      }
    }
  }
}

/** Parse a policy file's text (YAML, or JSON which YAML reads too) into rules; every value must be a rule. */
export function parsePolicyRules(doc: unknown, source: string): PolicyRules {
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new PolicySyntaxError(`Policy file ${source}: must map rule names to rules`);
  const out: Record<string, string | unknown[]> = {};
  for (const [name, value] of Object.entries(doc as Record<string, unknown>)) {
    if (typeof value === 'string' || Array.isArray(value)) out[name] = value;
    else throw new PolicySyntaxError(`Policy file ${source}: rule ${name} must be a string`);
  }
  return out;
}
