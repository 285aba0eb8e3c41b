import { isAppError } from '@osc/errors';
import { EvalFailure, ExpressionError, fail, SyntaxFailure } from '../errors';
import type { ExpressionHost } from '../host';
import { LruCache } from '../lru';
import { MISTRAL_YAQL_FUNCTIONS } from '../mistral-functions';
import {
  copyMarks,
  forgetViewSource,
  isView,
  fromHost,
  isDict,
  isOrdering,
  LazySeq,
  PyComplex,
  markIter,
  PyDate,
  PySet,
  toArray,
  toHost,
} from '../values';
import { parseYaql } from './parser';
import { asFailure, compile, type Compiled, LetFrame, type Runtime, Scope } from './runtime';
import { ITEMS_VIEWS, YaqlRegex } from './stdlib';

/** Compiled expressions, keyed by their (trimmed) text. Bounded so untrusted input cannot grow it. */
const CACHE = new LruCache<Compiled | SyntaxFailure>(2000);

/** Parses and compiles (cached); throws SyntaxFailure. */
export function compileYaql(text: string): Compiled {
  let c = CACHE.get(text);
  if (c === undefined) {
    try {
      c = compileNode(text);
    } catch (e) {
      if (!(e instanceof SyntaxFailure)) throw e;
      c = e;
    }
    CACHE.set(text, c);
  }
  if (c instanceof SyntaxFailure) throw c;
  return c;
}

function compileNode(text: string): Compiled {
  return compile(parseYaql(text));
}

/** Returns the syntax error message of a YAQL expression, or null when it parses. */
export function yaqlSyntaxError(text: string): string | null {
  try {
    compileYaql(text.trim());
    return null;
  } catch (e) {
    if (e instanceof SyntaxFailure) return e.message;
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * yaql's output conversion (Mistral sets yaql.convertOutputData): the iterators a query leaves
 * in the result, at any depth, are read out into lists, each exactly once.
 */
function convertOutput(v: unknown, depth = 0): unknown {
  if (depth > 100) return v;
  if (v instanceof LazySeq && v.once) return markIter(toArray(v).map((x) => convertOutput(x, depth + 1)));
  // an ordering (OrderingIterable) is read out into a list as well
  if (isOrdering(v)) return markIter((v as unknown[]).map((x) => convertOutput(x, depth + 1)));
  if (isView(v)) forgetViewSource(v as unknown[]);
  if (Array.isArray(v)) {
    let changed = false;
    const out = v.map((x) => {
      const y = convertOutput(x, depth + 1);
      if (y !== x) changed = true;
      return y;
    });
    if (!changed) return v;
    return copyMarks(v, out);
  }
  if (isDict(v)) {
    let changed = false;
    const out = new Map<unknown, unknown>();
    for (const [k, x] of v) {
      const y = convertOutput(x, depth + 1);
      if (y !== x) changed = true;
      out.set(k, y);
    }
    return changed ? out : v;
  }
  return v;
}

/**
 * yaql's output conversion turns the tuples and dicts inside a set into lists and dicts, which
 * Python cannot hash: a result set holding collections fails, as in the reference.
 */
function checkOutput(v: unknown, depth = 0): void {
  if (depth > 100) return;
  // Mistral stores results as JSON: what json.dumps cannot encode fails (yaql's own objects)
  if (v instanceof LetFrame) fail('Object of type Context is not JSON serializable', 'TypeError');
  if (v instanceof YaqlRegex) fail('Object of type Pattern is not JSON serializable', 'TypeError');
  if (v instanceof PyDate) fail('Object of type date is not JSON serializable', 'TypeError');
  if (v instanceof PyComplex) fail('Object of type complex is not JSON serializable', 'TypeError');
  // output conversion iterates what is lazy, so a query that failed inside fails here
  if (v instanceof LazySeq) for (const x of toArray(v)) checkOutput(x, depth + 1);
  if (Array.isArray(v) && ITEMS_VIEWS.has(v) && v.length > 0) fail("unhashable type: 'list'", 'TypeError');
  if (v instanceof PySet) {
    for (const x of v.values()) {
      if (Array.isArray(x)) fail("unhashable type: 'list'", 'TypeError');
      if (isDict(x)) fail("unhashable type: 'dict'", 'TypeError');
    }
  } else if (Array.isArray(v)) for (const x of v) checkOutput(x, depth + 1);
  else if (isDict(v)) for (const x of v.values()) checkOutput(x, depth + 1);
}

/**
 * Evaluates one YAQL expression (without `<% %>`) against already converted data and returns a
 * value of the internal model. Mistral: `$` is the data, `$__env`/`$__execution`/
 * `$__task_execution` are context variables taken from the data.
 */
export function evaluateYaqlNative(expr: string, data: unknown, host: ExpressionHost = {}): unknown {
  const text = expr.trim();
  try {
    const compiled = compileYaql(text);
    const rt: Runtime = { functions: MISTRAL_YAQL_FUNCTIONS, host, steps: 0 };
    const scope = new Scope(null, rt);
    scope.vars.set('', data);
    if (isDict(data)) {
      for (const k of ['__env', '__execution', '__task_execution'])
        scope.vars.set(k, data.has(k) ? data.get(k) : null);
    }
    const result = convertOutput(compiled(scope));
    checkOutput(result);
    return result;
  } catch (e) {
    // Typed errors from the host (a TransientError from the database) pass through untouched so the
    // engine can retry, as Mistral re-raises database errors.
    if (isAppError(e)) throw e;
    const reason = e instanceof SyntaxFailure ? e.message : asFailure(e).message;
    throw new ExpressionError(
      'yaql',
      text,
      reason,
      'evaluation',
      e instanceof SyntaxFailure ? (e.position ?? null) : null,
    );
  }
}

/**
 * Evaluates one YAQL expression against host data and returns plain data. The text is the bare
 * expression; surrounding `<% %>` delimiters are tolerated and removed.
 */
export function evaluateYaql(expr: string, data: unknown, host?: ExpressionHost): unknown {
  const m = /^\s*<%(.*)%>\s*$/s.exec(expr);
  const text = m ? m[1]! : expr;
  return toHost(evaluateYaqlNative(text, fromHostSafe(text, 'yaql', data), host));
}

export function fromHostSafe(expr: string, lang: 'yaql' | 'jinja', data: unknown): unknown {
  try {
    return fromHost(data);
  } catch (e) {
    throw new ExpressionError(
      lang,
      expr.trim(),
      e instanceof EvalFailure ? e.message : 'invalid data',
      'evaluation',
    );
  }
}
