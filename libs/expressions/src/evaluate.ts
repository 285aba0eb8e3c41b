import { ExpressionError } from './errors';
import type { ExpressionHost } from './host';
import { evaluateJinjaString, jinjaSyntaxError } from './jinja/engine';
import { fromHost, isDict, PreparedContext, pyStr, toHost, truthy } from './values';
import { evaluateYaqlNative, fromHostSafe, yaqlSyntaxError } from './yaql/engine';

/** `<% … %>`: shortest match, no line breaks inside (Mistral's INLINE_YAQL_REGEXP). */
const YAQL_RE = /<%.*?%>/g;
/** `{{ … }}` or `{% … %}` anywhere (Mistral's ANY_JINJA_REGEXP). */
const JINJA_RE = /\{\{.*\}\}|\{%.*%\}/;

/** Python's str.strip('<%>'): the delimiters and any adjacent '<', '%', '>' characters. */
const stripDelims = (s: string): string => s.replace(/^[<%>]+/, '').replace(/[<%>]+$/, '');

/** True when `value` is a string holding a YAQL or Jinja expression (DSL-8.1). */
export function containsExpression(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  YAQL_RE.lastIndex = 0;
  return YAQL_RE.test(value) || JINJA_RE.test(value);
}

/**
 * Syntax errors of the expressions inside one string, for the DSL validator (DSL-8.6): each
 * `<% %>` must be valid YAQL, a string with `{{ }}`/`{% %}` must be a valid Jinja template, and one
 * string cannot mix both kinds.
 */
export function validateExpressions(text: string): string[] {
  if (typeof text !== 'string') return [];
  const errors: string[] = [];
  const yaql = text.match(YAQL_RE) ?? [];
  const jinja = JINJA_RE.test(text);
  if (yaql.length > 0 && jinja) {
    errors.push(
      `The line already contains an expression of type YAQL, but Jinja expression is found: ${text}`,
    );
    return errors;
  }
  for (const occurrence of yaql) {
    const expr = stripDelims(occurrence).trim();
    const err = yaqlSyntaxError(expr);
    if (err !== null) errors.push(`Invalid YAQL expression [expression=${expr}, error=${err}]`);
  }
  if (jinja) {
    const err = jinjaSyntaxError(text);
    if (err !== null) errors.push(`Invalid Jinja expression [expression=${text}, error=${err}]`);
  }
  return errors;
}

/** Evaluates the expressions of one string in the internal value model (DSL-8.3, 8.4). */
export function evaluateStringNative(text: string, data: unknown, host: ExpressionHost): unknown {
  if (JINJA_RE.test(text)) return evaluateJinjaString(text, data, host);
  const found = text.match(YAQL_RE);
  if (!found) return text;
  let result: unknown = text;
  for (const occurrence of found) {
    const value = evaluateYaqlNative(stripDelims(occurrence), data, host);
    if (occurrence.length === text.length) result = value;
    else result = (result as string).split(occurrence).join(pyStr(value));
  }
  return result;
}

function walk(value: unknown, data: unknown, host: ExpressionHost): unknown {
  if (typeof value === 'string') return evaluateStringNative(value, data, host);
  if (Array.isArray(value)) return value.map((v) => walk(v, data, host));
  if (isDict(value)) return new Map([...value].map(([k, v]) => [k, walk(v, data, host)]));
  return value;
}

/**
 * Converts host data once so that many evaluations against it skip the conversion. The result is
 * opaque: pass it as `data` to evaluate / evaluateYaql / evaluateJinja. Later changes to the host
 * object are not seen by evaluations using the prepared context.
 */
export function prepareContext(data: unknown): PreparedContext {
  return new PreparedContext(fromHostSafe('', 'yaql', data));
}

/**
 * Prepares a layered data context (DSL-9.2): top-level keys are looked up in the layers in order,
 * the first layer holding a key wins. Layers that are not plain objects are skipped.
 */
export function prepareLayeredContext(...layers: unknown[]): PreparedContext {
  const merged = new Map<unknown, unknown>();
  for (const layer of layers) {
    const converted = fromHostSafe('', 'yaql', layer);
    if (!isDict(converted)) continue;
    for (const [k, v] of converted) if (!merged.has(k)) merged.set(k, v);
  }
  return new PreparedContext(merged);
}

/**
 * Whole-structure evaluation in the internal value model (floats stay floats); for tools.
 * `recursive` is Mistral's evaluate_recursively (task input, publish) to the letter: with an empty
 * data context (`{}`, `[]`, null, '') nothing is evaluated and the value comes back as written.
 */
export function evaluateNative(
  value: unknown,
  data: unknown,
  host: ExpressionHost = {},
  options: { recursive?: boolean } = {},
): unknown {
  const ctx = fromHostSafe('', 'yaql', data);
  if (options.recursive && !truthy(ctx)) {
    try {
      return fromHost(value);
    } catch {
      throw new ExpressionError('yaql', '', 'unsupported value', 'evaluation');
    }
  }
  let input: unknown;
  try {
    input = fromHost(value);
  } catch {
    throw new ExpressionError('yaql', '', 'unsupported value', 'evaluation');
  }
  return walk(input, ctx, host);
}

/**
 * Whole-structure evaluation (DSL-8.2–8.5): strings that are exactly one expression yield its native
 * value, expressions inside longer strings are rendered with Python's str() rules, dicts and lists are
 * evaluated recursively (values only; keys stay as written); other values are returned unchanged.
 * Throws {@link ExpressionError} only.
 */
export function evaluate(value: unknown, data: unknown, host: ExpressionHost = {}): unknown {
  return toHost(evaluateNative(value, data, host));
}
