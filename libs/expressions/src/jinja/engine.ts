import { isAppError } from '@osc/errors';
import { EvalFailure, ExpressionError, fail, SyntaxFailure } from '../errors';
import type { ExpressionHost } from '../host';
import { LruCache } from '../lru';
import { isDict, LazySeq, PyComplex, PyDate, toArray, toHost } from '../values';
import { fromHostSafe } from '../yaql/engine';
import { type JNode, parseJinjaExpression, parseTemplate, type Stmt } from './parser';
import { Evaluator, JCallable, JObject, JUndefined, use } from './runtime';

/** Parsed expressions and templates keyed by their text (bounded). */
const EXPRESSIONS = new LruCache<JNode | SyntaxFailure>(2000);
const TEMPLATES = new LruCache<Stmt[] | SyntaxFailure>(2000);

function cached<T>(cache: LruCache<T | SyntaxFailure>, text: string, parse: (s: string) => T): T {
  let v = cache.get(text);
  if (v === undefined) {
    try {
      v = parse(text);
    } catch (e) {
      if (!(e instanceof SyntaxFailure)) throw e;
      v = e;
    }
    cache.set(text, v);
  }
  if (v instanceof SyntaxFailure) throw v;
  return v;
}

/** Mistral's JINJA_REGEXP `({{(.*)}})`: greedy, single line. */
const WHOLE = /\{\{(.*)\}\}/;

function wrap(text: string, e: unknown): Error {
  // Typed errors from the host (ExpressionError included) pass through untouched.
  if (isAppError(e)) return e;
  let reason: string;
  if (e instanceof SyntaxFailure) reason = e.message;
  else if (e instanceof EvalFailure) reason = e.message;
  else if (e instanceof RangeError) reason = 'maximum recursion depth exceeded';
  else reason = e instanceof Error ? e.message : String(e);
  return new ExpressionError(
    'jinja',
    text,
    reason,
    'evaluation',
    e instanceof SyntaxFailure ? (e.position ?? null) : null,
  );
}

/** A result holding undefined values could not be stored (it is not data): fail instead. */
function rejectNestedUndefined(v: unknown, depth = 0): void {
  if (depth > 100) return;
  if (v instanceof JUndefined) {
    if (v.strict) v.raise();
    fail('undefined value inside the result', 'UndefinedError');
  }
  if (v instanceof LazySeq) for (const x of toArray(v)) rejectNestedUndefined(x, depth + 1);
  else if (Array.isArray(v)) for (const x of v) rejectNestedUndefined(x, depth + 1);
  else if (isDict(v)) for (const x of v.values()) rejectNestedUndefined(x, depth + 1);
  else if (v instanceof JCallable)
    fail('Object of type builtin_function_or_method is not JSON serializable', 'TypeError');
  else if (v instanceof JObject) fail(`Object of type ${v.typeName} is not JSON serializable`, 'TypeError');
  else if (v instanceof PyDate) fail('Object of type date is not JSON serializable', 'TypeError');
  else if (v instanceof PyComplex) fail('Object of type complex is not JSON serializable', 'TypeError');
}

/** Evaluates a bare Jinja expression (the inside of `{{ }}`) to a native value (internal model). */
export function evaluateJinjaExpressionNative(
  expr: string,
  data: unknown,
  host: ExpressionHost = {},
): unknown {
  try {
    const node = cached(EXPRESSIONS, expr, parseJinjaExpression);
    const value = new Evaluator({ host, data }).evaluateExpression(node);
    // Mistral str()-s the result once so that strict undefined values fail here; nested ones are
    // rejected below (they could not be stored).
    use(value);
    if (value instanceof JUndefined) return null;
    rejectNestedUndefined(value);
    return value;
  } catch (e) {
    throw wrap(expr, e);
  }
}

/**
 * Evaluates a string holding Jinja: exactly one `{{ … }}` yields the native value (DSL-8.4),
 * anything else is rendered as a template into a string (block-only strings render too, DSL-18.3).
 */
export function evaluateJinjaString(text: string, data: unknown, host: ExpressionHost = {}): unknown {
  const m = WHOLE.exec(text);
  // Deliberate deviation: Mistral's greedy pattern also treats `{{ a }}-{{ b }}` as one expression
  // and fails; we render such strings as templates (DSL-8.4: "exactly one {{ }}").
  if (m && m[0] === text && !m[1]!.includes('}}') && !m[1]!.includes('{{'))
    return evaluateJinjaExpressionNative(m[1]!, data, host);
  try {
    const body = cached(TEMPLATES, text, parseTemplate);
    return new Evaluator({ host, data }).render(body);
  } catch (e) {
    throw wrap(text, e);
  }
}

/** Syntax error of a Jinja template string, or null. */
export function jinjaSyntaxError(text: string): string | null {
  try {
    cached(TEMPLATES, text, parseTemplate);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * Evaluates one Jinja expression against host data and returns plain data. The text is the bare
 * expression; surrounding `{{ }}` delimiters are tolerated and removed.
 */
export function evaluateJinja(expr: string, data: unknown, host?: ExpressionHost): unknown {
  const m = /^\s*\{\{(.*)\}\}\s*$/s.exec(expr);
  const text = m && !m[1]!.includes('}}') ? m[1]! : expr;
  return toHost(evaluateJinjaExpressionNative(text, fromHostSafe(text, 'jinja', data), host));
}
