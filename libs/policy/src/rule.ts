import { InvalidInputError } from '@osc/errors';

/**
 * A parsed oslo.policy rule expression. `@` (and the empty rule) always passes, `!` never does;
 * `rule:<name>` evaluates another rule; `role:<name>` tests the caller's roles (case-insensitive);
 * any other `<key>:<match>` compares a credential (or a literal such as `True` or `'x'`) with
 * `<match>`, where `%(attr)s` is taken from the target.
 */
export type RuleNode =
  | { readonly kind: 'true' }
  | { readonly kind: 'false' }
  | { readonly kind: 'rule'; readonly name: string }
  | { readonly kind: 'role'; readonly match: string }
  | { readonly kind: 'generic'; readonly key: string; readonly match: string }
  | { readonly kind: 'and'; readonly items: readonly RuleNode[] }
  | { readonly kind: 'or'; readonly items: readonly RuleNode[] }
  | { readonly kind: 'not'; readonly item: RuleNode };

/** A rule that does not parse; names the rule and the problem, as operators read it at boot. */
export class PolicySyntaxError extends InvalidInputError {}

type Token =
  { t: '(' } | { t: ')' } | { t: 'and' } | { t: 'or' } | { t: 'not' } | { t: 'check'; text: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (let word of text
    .trim()
    .split(/\s+/)
    .filter((w) => w.length > 0)) {
    // Parentheses may stick to checks: `(role:a` and `b:c)`.
    while (word.startsWith('(')) {
      tokens.push({ t: '(' });
      word = word.slice(1);
    }
    let closing = 0;
    while (word.endsWith(')')) {
      closing += 1;
      word = word.slice(0, -1);
    }
    if (word.length > 0) {
      const lower = word.toLowerCase();
      if (lower === 'and' || lower === 'or' || lower === 'not') tokens.push({ t: lower });
      else tokens.push({ t: 'check', text: word });
    }
    for (let i = 0; i < closing; i++) tokens.push({ t: ')' });
  }
  return tokens;
}

function parseCheck(text: string, name: string): RuleNode {
  if (text === '@') return { kind: 'true' };
  if (text === '!') return { kind: 'false' };
  const colon = text.indexOf(':');
  if (colon <= 0)
    throw new PolicySyntaxError(
      `Policy rule ${name}: "${text}" is not a check (expected kind:match, @ or !)`,
    );
  const key = text.slice(0, colon);
  const match = text.slice(colon + 1);
  if (key === 'rule') return { kind: 'rule', name: match };
  if (key === 'role') return { kind: 'role', match };
  if (key === 'http' || key === 'https')
    throw new PolicySyntaxError(`Policy rule ${name}: remote ${key} checks are not supported`);
  return { kind: 'generic', key, match };
}

/** Parse one rule expression; `name` is used in error messages only. */
export function parseRule(text: string, name = '(rule)'): RuleNode {
  const tokens = tokenize(text);
  if (tokens.length === 0) return { kind: 'true' };
  let pos = 0;
  const fail = (why: string): never => {
    throw new PolicySyntaxError(`Policy rule ${name}: ${why} in "${text}"`);
  };
  const peek = () => tokens[pos];
  const orExpr = (): RuleNode => {
    const items = [andExpr()];
    while (peek()?.t === 'or') {
      pos += 1;
      items.push(andExpr());
    }
    return items.length === 1 ? (items[0] as RuleNode) : { kind: 'or', items };
  };
  const andExpr = (): RuleNode => {
    const items = [notExpr()];
    while (peek()?.t === 'and') {
      pos += 1;
      items.push(notExpr());
    }
    return items.length === 1 ? (items[0] as RuleNode) : { kind: 'and', items };
  };
  const notExpr = (): RuleNode => {
    if (peek()?.t === 'not') {
      pos += 1;
      return { kind: 'not', item: notExpr() };
    }
    return atom();
  };
  const atom = (): RuleNode => {
    const tok = tokens[pos];
    if (!tok) return fail('unexpected end');
    pos += 1;
    if (tok.t === '(') {
      const inner = orExpr();
      if (tokens[pos]?.t !== ')') fail('missing )');
      pos += 1;
      return inner;
    }
    if (tok.t === 'check') return parseCheck(tok.text, name);
    return fail(`unexpected "${tok.t}"`);
  };
  const node = orExpr();
  if (pos < tokens.length) fail(`unexpected "${(tokens[pos] as Token).t}"`);
  return node;
}

/**
 * oslo.policy's legacy list form: a list of alternatives, each a list of checks that must all
 * pass (`[["role:admin"], ["project_id:%(project_id)s"]]`); `[]` always passes.
 */
export function parseLegacyRule(list: unknown, name: string): RuleNode {
  if (!Array.isArray(list))
    throw new PolicySyntaxError(`Policy rule ${name}: must be a string or a list of lists`);
  if (list.length === 0) return { kind: 'true' };
  const alternatives = list.map((alt) => {
    if (!Array.isArray(alt) || !alt.every((c) => typeof c === 'string')) {
      throw new PolicySyntaxError(`Policy rule ${name}: each alternative must be a list of checks`);
    }
    const checks = (alt as string[]).map((c) => parseRule(c, name));
    return checks.length === 1 ? (checks[0] as RuleNode) : ({ kind: 'and', items: checks } as RuleNode);
  });
  return alternatives.length === 1 ? (alternatives[0] as RuleNode) : { kind: 'or', items: alternatives };
}
