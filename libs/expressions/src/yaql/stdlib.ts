import { EvalFailure, fail } from '../errors';
import { compilePyRegex, pyComplexPow, pyFormat, pyPow, pyRound, pySplit, pyStrip } from '../python';
import {
  checkSize,
  dictGet,
  dictHas,
  dictKey,
  hashKey,
  isDict,
  isFloat,
  isInt,
  isIter,
  isIterable,
  isNumber,
  isView,
  iterate,
  LazySeq,
  markIter,
  type PyDict,
  markOrdering,
  isOrdering,
  markPlainDict,
  markPyList,
  markView,
  mkFloat,
  num,
  pyCompare,
  PyDate,
  PyBigInt,
  bigOf,
  mkInt,
  PyDateTime,
  pyEquals,
  pyRepr,
  PySet,
  pyStr,
  PyTimespan,
  pyTypeName,
  yaqlTypeName,
  toArray,
  truthy,
  type PyFloat,
} from '../values';
import {
  callByName,
  type FnDef,
  type FnSlot,
  type Invocation,
  type Lambda,
  LambdaVars,
  LetFrame,
  MappingRule,
  MISSING,
  parseParams,
} from './runtime';

/**
 * The yaql 2.x standard library (the parts Mistral workflows use), registered the way yaql
 * declares them: function-only (`F`), method-only (`M`) or both (`MF`). Method-only functions are
 * invisible to plain calls (`where($, …)` is `Unknown function "where"`), as in the reference.
 */
export const STDLIB = new Map<string, FnSlot>();

type Impl = (args: any[], inv: Invocation) => unknown;

export function def(
  functions: Map<string, FnSlot>,
  names: string | string[],
  kind: 'F' | 'M' | 'MF',
  sig: string,
  impl: Impl,
): void {
  const { params, kwargs } = parseParams(sig);
  const fn: FnDef = { names: Array.isArray(names) ? names : [names], params, kwargs, impl };
  for (const name of Array.isArray(names) ? names : [names]) {
    const slot = functions.get(name) ?? {};
    if (kind.includes('F')) slot.fn = fn;
    if (kind.includes('M')) slot.method = fn;
    functions.set(name, slot);
  }
}
/** yaql functions whose result is a lazy iterator (not indexable, equal only to itself). */
const ITERATOR_RESULTS = new Set([
  'where',
  'filter',
  'select',
  'map',
  'selectMany',
  'skip',
  'take',
  'limit',
  'skipWhile',
  'takeWhile',
  'orderBy',
  'orderByDescending',
  'thenBy',
  'thenByDescending',
  'distinct',
  'enumerate',
  'zip',
  'zipLongest',
  'flatten',
  'append',
  'reverse',
  'range',
  'groupBy',
  'accumulate',
  'slice',
  'splitWhere',
  'sliceWhere',
  'repeat',
  'generate',
  'generateMany',
  'insertMany',
  'replaceMany',
  'selectAllCases',
  'concat',
  'delete',
]);
/**
 * The queries yaql computes only while they are iterated (generator functions, `filter`, `map`,
 * `zip`, `itertools.takewhile`, ordering iterables); the other iterator results (`take`'s islice,
 * `groupBy`, `reverse`, `range`, ...) compute or check their arguments at the call.
 */
const LAZY_QUERIES = new Set([
  'where',
  'filter',
  'select',
  'map',
  'selectMany',
  'skipWhile',
  'takeWhile',
  'orderBy',
  'orderByDescending',
  'thenBy',
  'thenByDescending',
  'distinct',
  'enumerate',
  'zip',
  'zipLongest',
  'flatten',
  'append',
  'accumulate',
  'slice',
  'splitWhere',
  'sliceWhere',
  'generate',
  'generateMany',
  'insertMany',
  'replaceMany',
  'selectAllCases',
]);
const DISPATCH_FAILURES = new Set([
  'NoMatchingFunctionException',
  'NoMatchingMethodException',
  'NoFunctionRegisteredException',
]);
/** yaql functions that return a Python list (rendered `[...]` by str(), not as a tuple). */
const LIST_RESULTS = new Set(['split', 'rightSplit', 'splitAt', 'insert']);
const reg = (names: string | string[], kind: 'F' | 'M' | 'MF', sig: string, impl: Impl) => {
  const first = Array.isArray(names) ? names[0]! : names;
  if (LIST_RESULTS.has(first)) {
    return def(STDLIB, names, kind, sig, (args, inv) => {
      const r = impl(args, inv);
      return Array.isArray(r) ? markPyList(r) : r;
    });
  }
  if (!ITERATOR_RESULTS.has(first)) return def(STDLIB, names, kind, sig, impl);
  return def(STDLIB, names, kind, sig, (args, inv) => {
    let r: unknown;
    try {
      r = impl(args, inv);
    } catch (e) {
      // yaql's queries are generators: what fails while computing one (a lambda, islice's count)
      // fails only once the result is iterated; testing it for truth or identity does not.
      // Arguments of the wrong type are refused at the call, as yaql's dispatch does.
      // (a refusal naming another function comes from inside a lambda: that one is lazy too)
      const refused =
        e instanceof EvalFailure && DISPATCH_FAILURES.has(e.pyType) && e.message.includes(`"${first}"`);
      if (e instanceof EvalFailure && LAZY_QUERIES.has(first) && !refused) {
        return new LazySeq(() => {
          throw e;
        }, `generator object ${first}`);
      }
      throw e;
    }
    if (!Array.isArray(r)) return r;
    // an ordering (orderBy/thenBy) sorts afresh each time it is iterated; every other query
    // result is a Python iterator, which yields its items to one consumer only
    if (RE_ITERABLE_RESULTS.has(first)) return markOrdering(r);
    return new LazySeq(() => r[Symbol.iterator](), `generator object ${first}`, true);
  });
};
const RE_ITERABLE_RESULTS = new Set(['orderBy', 'orderByDescending', 'thenBy', 'thenByDescending']);

const given = (v: unknown): boolean => v !== MISSING;
const noMatch = (name: string): never =>
  fail(`No function "${name}" matches supplied arguments`, 'NoMatchingFunctionException');

/** yaql `str()`: null/true/false spelled in yaql, collections as Python prints yaql's tuples. */
export function yaqlStr(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'string') return v;
  if (v instanceof PyDateTime || v instanceof PyTimespan || v instanceof PyDate) return pyStr(v);
  return pyRepr(v, true);
}

const isSeq = (v: unknown): boolean => Array.isArray(v) || v instanceof PySet || v instanceof LazySeq;
const needIter = (v: unknown, fname: string): unknown[] => {
  if (!isSeq(v)) noMatch(fname);
  return toArray(v);
};
const needSeq = (c: unknown, fname: string): unknown => (isSeq(c) ? c : noMatch(fname));
/** Whether some item passes, reading the collection only up to that item. */
const someItem = (c: unknown, test: (x: unknown) => boolean): boolean => {
  for (const x of iterate(c)) if (test(x)) return true;
  return false;
};
const needStr = (v: unknown, fname: string): string => (typeof v === 'string' ? v : noMatch(fname));
const needInt = (v: unknown, fname: string): number => (isInt(v) ? num(v) : noMatch(fname));
/** The most decimal digits an integer result may have (Python's are unbounded; memory is not). */
const MAX_INT_DIGITS = 100_000;
const needNum = (v: unknown, fname: string): number =>
  isNumber(v) && typeof v !== 'boolean' ? num(v) : noMatch(fname);
const chars = (s: string): string[] => Array.from(s);

// ---------------------------------------------------------------------------------------------
// operators

function add(l: unknown, r: unknown): unknown {
  if (isNumber(l) && isNumber(r))
    return arith(
      l,
      r,
      (a, b) => a + b,
      (a, b) => a + b,
    );
  if (typeof l === 'string' && typeof r === 'string')
    return checkSize(l.length + r.length, 'string') && l + r;
  if (isDict(l) && isDict(r)) return new Map([...l, ...r]);
  if (isSeq(l) && isSeq(r)) {
    const a = toArray(l);
    const b = toArray(r);
    checkSize(a.length + b.length, 'collection');
    return [...a, ...b];
  }
  return noMatch('#operator_+');
}

/**
 * Python arithmetic on numbers: floats when either side is one; ints exact at any size (`exact`
 * runs on bigints when a side is already big or the double result left JS's exact range).
 */
function arith(
  l: number | PyFloat,
  r: number | PyFloat,
  f: (a: number, b: number) => number,
  exact?: (a: bigint, b: bigint) => bigint,
): number | PyFloat | PyBigInt {
  if (exact && isInt(l) && isInt(r)) {
    if ((l as unknown) instanceof PyBigInt || (r as unknown) instanceof PyBigInt)
      return mkInt(exact(bigOf(l), bigOf(r)));
    const v = f(l, r);
    return Number.isSafeInteger(v) ? v : mkInt(exact(BigInt(l), BigInt(r)));
  }
  const v = f(num(l), num(r));
  return isFloat(l) || isFloat(r) ? mkFloat(v) : v;
}
/** Python's floor division and modulo of ints (rounding toward negative infinity). */
const floorDivBig = (a: bigint, b: bigint): bigint =>
  a % b !== 0n && a < 0n !== b < 0n ? a / b - 1n : a / b;
const floorModBig = (a: bigint, b: bigint): bigint => a - b * floorDivBig(a, b);

function pyDiv(l: unknown, r: unknown): unknown {
  if (!isNumber(l) || !isNumber(r)) return noMatch('#operator_/');
  const a = num(l);
  const b = num(r);
  if (isFloat(l) || isFloat(r)) {
    if (b === 0) fail('float division by zero', 'ZeroDivisionError');
    return mkFloat(a / b);
  }
  if (b === 0) fail('integer division or modulo by zero', 'ZeroDivisionError');
  if (l instanceof PyBigInt || r instanceof PyBigInt) return mkInt(floorDivBig(bigOf(l), bigOf(r)));
  return Math.floor(a / b);
}

function pyMod(l: unknown, r: unknown): unknown {
  if (!isNumber(l) || !isNumber(r)) return noMatch('#operator_mod');
  const a = num(l);
  const b = num(r);
  const flt = isFloat(l) || isFloat(r);
  if (b === 0) fail(flt ? 'float modulo' : 'integer modulo by zero', 'ZeroDivisionError');
  if (!flt && (l instanceof PyBigInt || r instanceof PyBigInt)) return mkInt(floorModBig(bigOf(l), bigOf(r)));
  const m = a - b * Math.floor(a / b);
  return flt ? mkFloat(m) : m;
}

function repeat(l: unknown, r: unknown): unknown {
  if (isNumber(l) && isNumber(r))
    return arith(
      l,
      r,
      (a, b) => a * b,
      (a, b) => a * b,
    );
  // Only real sequences repeat (not iterators or sets); Python's bool counts as an int here.
  const isSequence = (v: unknown) => Array.isArray(v) && !isIter(v);
  if (typeof r === 'boolean' && (typeof l === 'string' || isSequence(l))) r = r ? 1 : 0;
  if (typeof l === 'boolean' && (typeof r === 'string' || isSequence(r))) l = l ? 1 : 0;
  if ((isSeq(l) && !isSequence(l)) || (isSeq(r) && !isSequence(r))) return noMatch('#operator_*');
  if (typeof l === 'string' && isInt(r))
    return l.repeat(checkSize(Math.max(0, r) * l.length, 'string') && Math.max(0, r));
  if (isInt(l) && typeof r === 'string')
    return r.repeat(checkSize(Math.max(0, l) * r.length, 'string') && Math.max(0, l));
  if (isSeq(l) && isInt(r)) return repeatList(toArray(l), r);
  if (isInt(l) && isSeq(r)) return repeatList(toArray(r), l);
  return noMatch('#operator_*');
}

function repeatList(a: unknown[], times: number): unknown[] {
  checkSize(Math.max(0, times) * a.length, 'collection');
  const out: unknown[] = [];
  for (let i = 0; i < times; i++) out.push(...a);
  return out;
}

function comparable(l: unknown, r: unknown, op: string): number {
  if (l === null || r === null) return l === null && r === null ? 0 : l === null ? -1 : 1;
  const ok =
    (isNumber(l) && isNumber(r)) ||
    (typeof l === 'string' && typeof r === 'string') ||
    (l instanceof PySet && r instanceof PySet) ||
    (l instanceof PyDateTime && r instanceof PyDateTime) ||
    (l instanceof PyTimespan && r instanceof PyTimespan);
  if (!ok) noMatch(`#operator_${op}`);
  return pyCompare(l, r);
}

function regexOf(v: unknown, fname: string): RegExp {
  if (v instanceof YaqlRegex) return v.re;
  if (typeof v === 'string') return compilePyRegex(v, '');
  return noMatch(fname);
}

/** A compiled pattern made by `regex()`. */
export class YaqlRegex {
  constructor(
    readonly source: string,
    readonly re: RegExp,
  ) {}
}
/** Python's re caches compiled patterns: the same pattern and flags give the same (equal) object. */
const sameRegex = (l: unknown, r: unknown): boolean | null =>
  l instanceof YaqlRegex || r instanceof YaqlRegex
    ? l instanceof YaqlRegex && r instanceof YaqlRegex && l.source === r.source && l.re.flags === r.re.flags
    : null;

/**
 * `dict.items()` views. yaql's output conversion turns a view (a Python Set) into a set of its
 * pairs, which become lists and cannot be hashed: a non-empty items() view fails as a result.
 */
export const ITEMS_VIEWS = new WeakSet<unknown[]>();

reg('#operator_+', 'F', 'l, r', ([l, r]) => add(l, r));
reg('#operator_-', 'F', 'l, r', ([l, r]) => {
  if (isNumber(l) && isNumber(r))
    return arith(
      l,
      r,
      (a, b) => a - b,
      (a, b) => a - b,
    );
  if (l instanceof PySet && r instanceof PySet) return new PySet(l.values().filter((x) => !r.has(x)));
  return noMatch('#operator_-');
});
reg('#operator_*', 'F', 'l, r', ([l, r]) => repeat(l, r));
reg('#operator_/', 'F', 'l, r', ([l, r]) => pyDiv(l, r));
reg('#operator_mod', 'F', 'l, r', ([l, r]) => pyMod(l, r));
/** Sets order by inclusion, as Python's frozenset comparisons. */
const subset = (a: PySet, b: PySet): boolean => a.values().every((x) => b.has(x));
reg('#operator_<', 'F', 'l, r', ([l, r]) =>
  l instanceof PySet && r instanceof PySet ? subset(l, r) && l.size < r.size : comparable(l, r, '<') < 0,
);
reg('#operator_>', 'F', 'l, r', ([l, r]) =>
  l instanceof PySet && r instanceof PySet ? subset(r, l) && l.size > r.size : comparable(l, r, '>') > 0,
);
reg('#operator_<=', 'F', 'l, r', ([l, r]) =>
  l instanceof PySet && r instanceof PySet ? subset(l, r) : comparable(l, r, '<=') <= 0,
);
reg('#operator_>=', 'F', 'l, r', ([l, r]) =>
  l instanceof PySet && r instanceof PySet ? subset(r, l) : comparable(l, r, '>=') >= 0,
);
reg('#operator_=', 'F', 'l, r', ([l, r]) => sameRegex(l, r) ?? pyEquals(l, r));
reg('#operator_!=', 'F', 'l, r', ([l, r]) => !(sameRegex(l, r) ?? pyEquals(l, r)));
reg('#operator_in', 'F', 'l, r', ([l, r]) => {
  if (typeof l === 'string' && typeof r === 'string') return r.includes(l);
  if (isSeq(r)) return someItem(r, (x) => pyEquals(x, l));
  return noMatch('#operator_in');
});
reg('#operator_=~', 'F', 'l, r', ([l, r]) => regexOf(r, '#operator_=~').test(needStr(l, '#operator_=~')));
reg('#operator_!~', 'F', 'l, r', ([l, r]) => !regexOf(r, '#operator_!~').test(needStr(l, '#operator_!~')));
reg('#unary_operator_-', 'F', 'x', ([x]) =>
  x instanceof PyBigInt
    ? mkInt(-x.value)
    : isNumber(x)
      ? isFloat(x)
        ? mkFloat(-num(x))
        : -num(x) || 0
      : noMatch('#unary_operator_-'),
);
reg('#unary_operator_+', 'F', 'x', ([x]) => (isNumber(x) ? x : noMatch('#unary_operator_+')));
reg('#unary_operator_not', 'F', 'x', ([x]) => !truthy(x));

// ---------------------------------------------------------------------------------------------
// constructors and system

function mappingToDict(args: unknown[], kwargs: Map<string, unknown>, fname: string): Map<unknown, unknown> {
  const m = new Map<unknown, unknown>();
  for (const a of args) {
    if (!(a instanceof MappingRule)) noMatch(fname);
    const r = a as MappingRule;
    m.set(hashableKey(r.key()), r.value());
  }
  for (const [k, v] of kwargs) m.set(k, v);
  return m;
}

function hashableKey(k: unknown): unknown {
  if (isDict(k)) fail("unhashable type: 'dict'", 'TypeError');
  if (Array.isArray(k)) fail("unhashable type: 'list'", 'TypeError');
  return dictKey(k);
}

reg('#list', 'F', '*args', ([...args]) => {
  if (args.some((a) => a instanceof MappingRule)) noMatch('#list');
  return args;
});
reg('#map', 'F', '*args', (args, inv) => mappingToDict(args, inv.kwargs, '#map'));
reg('dict', 'F', '*args, **kwargs', (args, inv) => {
  if (args.length === 1 && !(args[0] instanceof MappingRule) && isSeq(args[0])) {
    // yaql's dict(items): `it = iter(t); key = next(it); value = next(it)` — the first two items of
    // each element (a dict's first two keys), more are ignored
    const m = new Map<unknown, unknown>();
    for (const pair of toArray(args[0])) {
      const p =
        typeof pair === 'string'
          ? Array.from(pair)
          : isIterable(pair)
            ? toArray(pair)
            : fail(`'${pyTypeName(pair)}' object is not iterable`, 'TypeError');
      if (p.length < 2) fail('generator raised StopIteration', 'RuntimeError');
      m.set(hashableKey(p[0]), p[1]);
    }
    return m;
  }
  return mappingToDict(args, inv.kwargs, 'dict');
});
/** list(...) and set(...) take their arguments as items, spreading iterators (query results). */
const spreadIterators = (args: unknown[]): unknown[] =>
  args.flatMap((a) => ((isIter(a) && !isView(a)) || a instanceof LazySeq ? toArray(a) : [a]));
reg('list', 'F', '*args', (args) => spreadIterators(args));
reg('set', 'F', '*args', (args) => {
  const out = new PySet();
  for (const a of args) {
    if ((isIter(a) && !isView(a)) || a instanceof LazySeq) for (const x of toArray(a)) out.add(x);
    else out.add(a);
  }
  return out;
});
reg('let', 'F', '*args, **kwargs', (args, inv) => {
  const s = inv.scope.child();
  args.forEach((v, i) => s.vars.set(String(i + 1), v));
  for (const [k, v] of inv.kwargs) s.vars.set(k, v);
  return new LetFrame(s);
});
reg('def', 'F', 'name, func:λ', ([name, func], inv) => {
  if (typeof name !== 'string') noMatch('def');
  const s = inv.scope.child();
  s.fns = new Map<string, Lambda>([[name as string, func as Lambda]]);
  return new LetFrame(s);
});
reg(
  'generateMany',
  'F',
  'initial, producer:λ, selector?:λ, decycle?, depthFirst?',
  ([initial, prod, sel, decycle, depthFirst]) => {
    if (given(decycle) && typeof decycle !== 'boolean') noMatch('generateMany');
    if (given(depthFirst) && typeof depthFirst !== 'boolean') noMatch('generateMany');
    const out: unknown[] = [];
    const seen = decycle === true ? new PySet() : null;
    const queue: unknown[] = [initial];
    while (queue.length > 0) {
      const item = queue.shift();
      if (seen) {
        if (seen.has(item)) continue;
        seen.add(item);
      }
      out.push(given(sel) ? sel(item) : item);
      checkSize(out.length, 'collection');
      const produced = needIter(prod(item), 'generateMany');
      // depthFirst: the produced items go to the front of the queue, in their order
      if (depthFirst === true) queue.unshift(...produced);
      else queue.push(...produced);
      checkSize(queue.length, 'collection');
    }
    return out;
  },
);
/** call(name, args, kwargs, receiver?): the function (or method, with a receiver) called by name. */
reg('call', 'F', 'name, args, kwargs, receiver?', ([name, args, kwargs, receiver], inv) => {
  if (typeof name !== 'string' || !isSeq(args) || !isDict(kwargs)) noMatch('call');
  const named = new Map<string, unknown>();
  for (const [k, v] of kwargs as Map<unknown, unknown>) named.set(String(k), v);
  return callByName(name as string, inv.scope, toArray(args), named, receiver);
});
reg('random', 'F', 'from?, to?', ([from, to], inv) => {
  const rnd = inv.scope.rt.host.random ?? Math.random;
  if (!given(from) && !given(to)) return mkFloat(rnd.call(inv.scope.rt.host));
  if (!given(from) || !given(to)) noMatch('random');
  // random.randint(from, to): both ends included
  const int = (v: unknown): number => {
    if (isInt(v)) return v;
    if (typeof v === 'string')
      return /^\s*[+-]?\d+\s*$/.test(v)
        ? Number(v)
        : fail(`invalid literal for int() with base 10: ${pyRepr(v)}`, 'ValueError');
    if (isFloat(v) && Number.isInteger(num(v as number))) return num(v as number);
    return fail(`'${pyTypeName(v)}' object cannot be interpreted as an integer`, 'TypeError');
  };
  const a = int(from);
  const b = int(to);
  if (b < a) fail(`empty range for randrange() (${a}, ${b + 1}, ${b + 1 - a})`, 'ValueError');
  return a + Math.floor(rnd.call(inv.scope.rt.host) * (b - a + 1));
});
/** examine(*lambdas): whether each argument evaluates to something true, as a list. */
reg('examine', 'F', '*args:λ', (args: Lambda[]) => markPyList(args.map((f) => truthy(f()))));
reg('with', 'F', '*args', (args, inv) => {
  const s = inv.scope.child();
  args.forEach((v, i) => s.vars.set(String(i + 1), v));
  return new LetFrame(s);
});
reg('unpack', 'M', 'sequence, *args', ([seq, ...names], inv) => {
  const items = needIter(seq, 'unpack');
  // yaql reads at most one element more than there are names, and reports how many it read
  if (names.length > 0 && names.length !== items.length)
    fail(
      `Cannot unpack ${Math.min(items.length, names.length + 1)} elements into ${names.length}`,
      'ValueError',
    );
  const s = inv.scope.child();
  items.forEach((v, i) => s.vars.set(names.length > 0 ? String(names[i]) : String(i + 1), v));
  return new LetFrame(s);
});
reg('selectAllCases', 'F', '*args:λ', (args: Lambda[]) => {
  const out: number[] = [];
  args.forEach((f, i) => {
    if (truthy(f())) out.push(i);
  });
  return out;
});
reg(
  'generate',
  'F',
  'initial, predicate:λ, producer:λ, selector?:λ, decycle?',
  ([initial, pred, prod, sel, decycle]) => {
    const out: unknown[] = [];
    const seen = new PySet();
    let x = initial;
    while (truthy(pred(x))) {
      if (given(decycle) && truthy(decycle)) {
        if (seen.has(x)) break;
        seen.add(x);
      }
      out.push(given(sel) ? sel(x) : x);
      checkSize(out.length, 'collection');
      x = prod(x);
    }
    return out;
  },
);
reg('switch', 'F', '*args', (args) => {
  for (const a of args) {
    if (!(a instanceof MappingRule)) noMatch('switch');
    const r = a as MappingRule;
    if (truthy(r.key())) return r.value();
  }
  return null;
});
reg('coalesce', 'F', '*args:λ', (args: Lambda[]) => {
  for (const f of args) {
    const v = f();
    if (v !== null) return v;
  }
  return null;
});
reg('selectCase', 'F', '*args:λ', (args: Lambda[]) => {
  for (let i = 0; i < args.length; i++) if (truthy(args[i]!())) return i;
  return args.length;
});
reg('switchCase', 'M', 'case, *args:λ', ([c, ...args]: any[]) => {
  if (!isInt(c)) noMatch('switchCase');
  const i = c as number;
  if (i >= 0 && i < args.length) return args[i]!();
  return args.length > 0 ? args[args.length - 1]!() : null;
});
reg('assert', 'M', 'obj, condition:λ, message?', ([obj, cond, msg]) => {
  if (!truthy(cond(obj))) fail(given(msg) ? String(msg) : 'Assertion failed', 'AssertionError');
  return obj;
});

// ---------------------------------------------------------------------------------------------
// types and conversion

reg('str', 'F', 'value', ([v]) => yaqlStr(v));
reg('int', 'F', 'value', ([v]) => {
  if (v === null) return 0;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof PyBigInt) return v;
  if (isNumber(v)) {
    const n = num(v);
    if (!Number.isFinite(n)) fail('cannot convert float infinity to integer', 'OverflowError');
    // a float beyond 2^53 is an integral double: Python's int() of it is exact
    return Number.isSafeInteger(Math.trunc(n)) ? Math.trunc(n) || 0 : mkInt(BigInt(Math.trunc(n)));
  }
  if (typeof v === 'string') {
    const t = v.trim().replace(/_/g, '');
    if (/^[+-]?\d+$/.test(t)) return mkInt(BigInt(t));
    return fail(`invalid literal for int() with base 10: ${pyRepr(v)}`, 'ValueError');
  }
  return fail(
    `int() argument must be a string, a bytes-like object or a real number, not '${yaqlTypeName(v)}'`,
    'TypeError',
  );
});
reg('float', 'F', 'value', ([v]) => {
  if (v === null) return mkFloat(0);
  if (typeof v === 'boolean') return mkFloat(v ? 1 : 0);
  if (isNumber(v)) return mkFloat(num(v));
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return mkFloat(parseFloat(t));
    if (/^[+-]?(inf|infinity)$/.test(t)) return mkFloat(t.startsWith('-') ? -Infinity : Infinity);
    if (/^[+-]?nan$/.test(t)) return NaN;
    return fail(`could not convert string to float: ${pyRepr(v)}`, 'ValueError');
  }
  return fail(`float() argument must be a string or a real number, not '${yaqlTypeName(v)}'`, 'TypeError');
});
reg('bool', 'F', 'value', ([v]) => truthy(v));
reg('isString', 'F', 'arg', ([v]) => typeof v === 'string');
reg('isList', 'F', 'arg', ([v]) => Array.isArray(v) && !isIter(v));
reg('isDict', 'F', 'arg', ([v]) => isDict(v));
reg('isSet', 'F', 'arg', ([v]) => v instanceof PySet);
reg('isInteger', 'F', 'value', ([v]) => isInt(v));
reg('isNumber', 'F', 'value', ([v]) => isNumber(v));
reg('isBoolean', 'F', 'value', ([v]) => typeof v === 'boolean');
reg('isIterable', 'F', 'value', ([v]) => isSeq(v) || isDict(v));
reg('isRegex', 'F', 'value', ([v]) => v instanceof YaqlRegex);
reg('isDatetime', 'F', 'value', () => false);
reg('isTimespan', 'F', 'value', () => false);

// ---------------------------------------------------------------------------------------------
// math

reg('abs', 'F', 'op', ([x]) =>
  isFloat(x) ? mkFloat(Math.abs(needNum(x, 'abs'))) : Math.abs(needNum(x, 'abs')),
);
reg('round', 'F', 'number, ndigits?', ([x, nd]) => {
  const n = needNum(x, 'round');
  const r = pyRound(n, given(nd) ? needInt(nd, 'round') : 0);
  if (!given(nd) && isFloat(x)) return mkFloat(r);
  return isFloat(x) ? mkFloat(r) : r;
});
reg('pow', 'F', 'a, b, c?', ([a, b, c]) => {
  const x = needNum(a, 'pow');
  const y = needNum(b, 'pow');
  if (given(c)) {
    if (!isInt(c)) noMatch('pow');
    if (!isInt(a) || !isInt(b)) noMatch('pow');
    // Python's three-argument pow, exact (the product of two residues passes 2^53)
    const m = bigOf(c);
    if (m === 0n) fail('pow() 3rd argument cannot be 0', 'ValueError');
    let e = bigOf(b);
    if (e < 0n) fail('base is not invertible for the given modulus', 'ValueError');
    let r = 1n;
    let base = floorModBig(bigOf(a), m);
    for (; e > 0n; e /= 2n) {
      if (e % 2n === 1n) r = floorModBig(r * base, m);
      base = floorModBig(base * base, m);
    }
    return mkInt(floorModBig(r, m));
  }
  if (isInt(a) && isInt(b) && y >= 0) {
    const v = x ** y;
    if (Number.isSafeInteger(v) && !((a as unknown) instanceof PyBigInt)) return v;
    // Python ints have no upper bound; the digits a result may have are bounded like strings
    if (y * Math.log10(Math.max(2, Math.abs(x))) > MAX_INT_DIGITS)
      fail('Expression result exceeds the integer size quota', 'MemoryQuotaExceededException');
    return mkInt(bigOf(a) ** bigOf(b));
  }
  if (x === 0 && y < 0) fail('0.0 cannot be raised to a negative power', 'ZeroDivisionError');
  // a negative base to a fractional power is a complex number in Python
  const complex = pyComplexPow(x, y);
  if (complex) return complex;
  const p = pyPow(x, y);
  // C's pow reports ERANGE for a finite result too large for a double
  if ((p === Infinity || p === -Infinity) && Number.isFinite(x) && Number.isFinite(y))
    fail("(34, 'Numerical result out of range')", 'OverflowError');
  return mkFloat(p);
});
reg('sign', 'F', 'num', ([x]) => {
  const n = needNum(x, 'sign');
  return n > 0 ? 1 : n < 0 ? -1 : 0;
});
reg('hex', 'F', 'num', ([x]) => {
  // yaql takes any number and leaves the refusal of floats to Python's hex()
  if (isFloat(x) && typeof x !== 'boolean')
    fail("'float' object cannot be interpreted as an integer", 'TypeError');
  const n = needInt(x, 'hex');
  return n < 0 ? `-0x${(-n).toString(16)}` : `0x${n.toString(16)}`;
});
reg('bitwiseAnd', 'F', 'left, right', ([a, b]) => needInt(a, 'bitwiseAnd') & needInt(b, 'bitwiseAnd'));
reg('bitwiseOr', 'F', 'left, right', ([a, b]) => needInt(a, 'bitwiseOr') | needInt(b, 'bitwiseOr'));
reg('bitwiseXor', 'F', 'left, right', ([a, b]) => needInt(a, 'bitwiseXor') ^ needInt(b, 'bitwiseXor'));
reg('bitwiseNot', 'F', 'arg', ([a]) => ~needInt(a, 'bitwiseNot'));
const shiftCount = (b: unknown, name: string): number => {
  const n = needInt(b, name);
  return n < 0 ? fail('negative shift count', 'ValueError') : n;
};
reg(
  'shiftBitsLeft',
  'F',
  'value, bitsNumber',
  ([a, b]) => needInt(a, 'shiftBitsLeft') * 2 ** shiftCount(b, 'shiftBitsLeft'),
);
reg('shiftBitsRight', 'F', 'value, bitsNumber', ([a, b]) =>
  Math.floor(needInt(a, 'shiftBitsRight') / 2 ** shiftCount(b, 'shiftBitsRight')),
);

function maxMin(sign: 1 | -1, name: string) {
  reg(name, 'F', 'a, b', ([a, b]) => {
    const c = comparable(a, b, '>');
    return sign * c >= 0 ? a : b;
  });
  // yaql: collection.max(initial) folds the collection with the max(a, b) function (no key)
  reg(name, 'M', 'collection, initial?', ([coll, initial]) => {
    let best: unknown = MISSING;
    for (const x of needIter(coll, name)) {
      if (best === MISSING || sign * comparable(x, best, '>') > 0) best = x;
    }
    if (best === MISSING) {
      if (given(initial)) return initial;
      // yaql folds with functools.reduce
      fail('reduce() of empty iterable with no initial value', 'TypeError');
    }
    return best;
  });
}
maxMin(1, 'max');
maxMin(-1, 'min');

reg('range', 'F', 'start, stop?, step?', ([a, b, c]) => {
  let start = 0;
  let stop: number;
  let step = 1;
  if (!given(b)) stop = needInt(a, 'range');
  else {
    start = needInt(a, 'range');
    stop = needInt(b, 'range');
    if (given(c)) step = needInt(c, 'range');
  }
  if (step === 0) fail('range() arg 3 must not be zero', 'ValueError');
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) {
    out.push(i);
    if (out.length > 1_000_000) fail('Iterator limit exceeded', 'CollectionTooLargeException');
  }
  return out;
});
reg('sequence', 'F', 'start?, step?', ([a, b]) => {
  const start = given(a) ? needNum(a, 'sequence') : 0;
  const step = given(b) ? needNum(b, 'sequence') : 1;
  return new LazySeq(
    function* () {
      for (let i = start; ; i += step) yield i;
    },
    'generator object sequence',
    true,
  );
});

// ---------------------------------------------------------------------------------------------
// queries

const lambdaOr = (f: unknown, dflt: Lambda): Lambda => (given(f) && f !== null ? (f as Lambda) : dflt);
const id: Lambda = (x) => x;

/**
 * A Python iterator over a yaql query: single-use, computed item by item as it is pulled, so
 * `take(1)` or `first()` of a query whose later items fail (or that never ends) succeeds, as in
 * yaql; a failure is raised when its item is reached.
 */
const stream = (label: string, gen: () => Generator<unknown>): LazySeq => new LazySeq(gen, label, true);

reg(['where', 'filter'], 'M', 'collection, predicate:λ', ([c, p]) => {
  const src = needSeq(c, 'where');
  return stream('filter object', function* () {
    for (const x of iterate(src)) if (truthy(p(x))) yield x;
  });
});
reg(['select', 'map'], 'M', 'collection, selector:λ', ([c, f]) => {
  const src = needSeq(c, 'select');
  return stream('map object', function* () {
    for (const x of iterate(src)) yield f(x);
  });
});
reg('selectMany', 'M', 'collection, selector:λ', ([c, f]) => {
  const src = needSeq(c, 'selectMany');
  return stream('generator object select_many', function* () {
    for (const x of iterate(src)) {
      const r = f(x);
      if (isSeq(r)) yield* iterate(r);
      else yield r;
    }
  });
});
reg('len', 'MF', 'collection', ([c]) => {
  if (typeof c === 'string') return chars(c).length;
  // an OrderingIterable is neither a sequence nor an iterator, the types yaql's len takes
  if (isOrdering(c)) return noMatch('len');
  if (isDict(c)) return c.size;
  if (isSeq(c)) return toArray(c).length;
  return noMatch('len');
});
reg('count', 'M', 'collection', ([c]) => needIter(c, 'count').length);
reg('first', 'M', 'collection, default?', ([c, d]) => {
  if (!isSeq(c)) noMatch('first');
  for (const x of iterate(c)) return x;
  if (given(d)) return d;
  return fail('', 'StopIteration');
});
reg('last', 'M', 'collection, default?', ([c, d]) => {
  const a = needIter(c, 'last');
  if (a.length > 0) return a[a.length - 1];
  if (given(d)) return d;
  return fail('', 'StopIteration');
});
reg('single', 'M', 'collection', ([c]) => {
  const a = needIter(c, 'single');
  if (a.length !== 1) fail(a.length === 0 ? '' : 'Collection contains more than one item', 'StopIteration');
  return a[0];
});
/** yaql's skip/take are itertools.islice, which refuses negative counts (message as CPython's). */
const ISLICE_START = 'Indices for islice() must be None or an integer: 0 <= x <= sys.maxsize.';
const ISLICE_STOP = 'Stop argument for islice() must be None or an integer: 0 <= x <= sys.maxsize.';
// itertools.islice checks its counts at the call and reads its source only as it is pulled
reg('skip', 'M', 'collection, count', ([c, n]) => {
  const k = needInt(n, 'skip');
  const src = needSeq(c, 'skip');
  if (k < 0) fail(ISLICE_START, 'ValueError');
  return stream('itertools.islice object', function* () {
    let i = 0;
    for (const x of iterate(src)) if (i++ >= k) yield x;
  });
});
reg(['take', 'limit'], 'M', 'collection, count', ([c, n]) => {
  const src = needSeq(c, 'take');
  const k = needInt(n, 'take');
  // CPython's islice reports a stop of -1 as not an index, and one below that as out of range
  if (k < 0) fail(k === -1 ? ISLICE_STOP : ISLICE_START, 'ValueError');
  return stream('itertools.islice object', function* () {
    if (k === 0) return;
    let i = 0;
    for (const x of iterate(src)) {
      yield x;
      if (++i >= k) return;
    }
  });
});
reg('skipWhile', 'M', 'collection, predicate:λ', ([c, p]) => {
  const src = needSeq(c, 'skipWhile');
  return stream('itertools.dropwhile object', function* () {
    let skipping = true;
    for (const x of iterate(src)) {
      if (skipping && truthy(p(x))) continue;
      skipping = false;
      yield x;
    }
  });
});
reg('takeWhile', 'M', 'collection, predicate:λ', ([c, p]) => {
  const src = needSeq(c, 'takeWhile');
  return stream('itertools.takewhile object', function* () {
    for (const x of iterate(src)) {
      if (!truthy(p(x))) return;
      yield x;
    }
  });
});

/** An ordered result that `thenBy` can refine; it behaves as a list everywhere else. */
type Ordered = unknown[] & { __keys?: Array<{ f: Lambda; desc: boolean }>; __src?: unknown[] };

function sortBy(src: unknown[], keys: Array<{ f: Lambda; desc: boolean }>): Ordered {
  const decorated = src.map((x, i) => ({ x, i, k: keys.map((k) => k.f(x)) }));
  decorated.sort((a, b) => {
    for (let j = 0; j < keys.length; j++) {
      const c = comparable(a.k[j], b.k[j], '<');
      if (c !== 0) return keys[j]!.desc ? -c : c;
    }
    return a.i - b.i;
  });
  const out = decorated.map((d) => d.x) as Ordered;
  Object.defineProperty(out, '__keys', { value: keys, enumerable: false });
  Object.defineProperty(out, '__src', { value: src, enumerable: false });
  return out;
}
reg('orderBy', 'M', 'collection, selector:λ', ([c, f]) =>
  sortBy(needIter(c, 'orderBy'), [{ f, desc: false }]),
);
reg('orderByDescending', 'M', 'collection, selector:λ', ([c, f]) =>
  sortBy(needIter(c, 'orderByDescending'), [{ f, desc: true }]),
);
function thenBy(desc: boolean, name: string) {
  reg(name, 'M', 'collection, selector:λ', ([c, f]) => {
    const o = c as Ordered;
    if (!Array.isArray(c) || !o.__keys || !o.__src) return noMatch(name);
    return sortBy(o.__src, [...o.__keys, { f, desc }]);
  });
}
thenBy(false, 'thenBy');
thenBy(true, 'thenByDescending');

reg('groupBy', 'M', 'collection, keySelector:λ, valueSelector?:λ, aggregator?:λ', ([c, kf, vf, agg]) => {
  const groups = new Map<string, [unknown, unknown[]]>();
  for (const x of needIter(c, 'groupBy')) {
    const k = kf(x);
    const v = given(vf) ? vf(x) : x;
    const h = hashKey(k);
    const g = groups.get(h);
    if (g) g[1].push(v);
    else groups.set(h, [k, [v]]);
  }
  return [...groups.values()].map(([k, vs]) => {
    return given(agg) ? [k, agg(vs)] : [k, vs];
  });
});
reg('distinct', 'MF', 'collection, keySelector?:λ', ([c, kf]) => {
  const src = needSeq(c, 'distinct');
  const f = lambdaOr(kf, id);
  return stream('generator object distinct', function* () {
    const seen = new Set<string>();
    for (const x of iterate(src)) {
      const h = hashKey(f(x));
      if (seen.has(h)) continue;
      seen.add(h);
      yield x;
    }
  });
});
reg('sum', 'M', 'collection, initial?', ([c, init]) => {
  const a = needIter(c, 'sum');
  if (a.length === 0 && !given(init)) fail('reduce() of empty iterable with no initial value', 'TypeError');
  let acc: unknown = given(init) ? init : a[0];
  for (let i = given(init) ? 0 : 1; i < a.length; i++) acc = add(acc, a[i]);
  return acc;
});
// these stop at the first item that decides, leaving the rest of an iterator unread, as Python's
// any(), all() and `in` do
reg('any', 'MF', 'collection, predicate?:λ', ([c, p]) =>
  someItem(needSeq(c, 'any'), (x) => !given(p) || truthy((p as Lambda)(x))),
);
reg(
  'all',
  'MF',
  'collection, predicate?:λ',
  ([c, p]) => !someItem(needSeq(c, 'all'), (x) => !truthy(lambdaOr(p, id)(x))),
);
reg('contains', 'M', 'collection, value', ([c, v]) =>
  someItem(needSeq(c, 'contains'), (x) => pyEquals(x, v)),
);
reg('indexOf', 'M', 'collection, item, start?, length?', ([c, item, start, length]) => {
  if (typeof c === 'string') return strIndexOf(c, needStr(item, 'indexOf'), start, length, false);
  let i = 0;
  for (const x of iterate(needSeq(c, 'indexOf'))) {
    if (pyEquals(x, item)) return i;
    i++;
  }
  return -1;
});
reg('lastIndexOf', 'M', 'collection, item, start?, length?', ([c, item, start, length]) => {
  if (typeof c === 'string') return strIndexOf(c, needStr(item, 'lastIndexOf'), start, length, true);
  const a = needIter(c, 'lastIndexOf');
  for (let i = a.length - 1; i >= 0; i--) if (pyEquals(a[i], item)) return i;
  return -1;
});
reg('indexWhere', 'M', 'collection, predicate:λ', ([c, p]) => {
  let i = 0;
  for (const x of iterate(needSeq(c, 'indexWhere'))) {
    if (truthy(p(x))) return i;
    i++;
  }
  return -1;
});
reg('lastIndexWhere', 'M', 'collection, predicate:λ', ([c, p]) => {
  const a = needIter(c, 'lastIndexWhere');
  for (let i = a.length - 1; i >= 0; i--) if (truthy(p(a[i]))) return i;
  return -1;
});
reg('enumerate', 'MF', 'collection, start?', ([c, s]) => {
  const start = given(s) ? needInt(s, 'enumerate') : 0;
  const src = needSeq(c, 'enumerate');
  return stream('generator object enumerate_', function* () {
    let i = start;
    for (const x of iterate(src)) yield markPyList([i++, x]);
  });
});
reg('zip', 'M', 'collection, *collections', ([c, ...rest]) => {
  const all = [needIter(c, 'zip'), ...rest.map((r) => needIter(r, 'zip'))];
  const n = Math.min(...all.map((a) => a.length));
  return Array.from({ length: n }, (_, i) => all.map((a) => a[i]));
});
reg('zipLongest', 'M', 'collection, *collections, **kwargs', ([c, ...rest], inv) => {
  const all = [needIter(c, 'zipLongest'), ...rest.map((r) => needIter(r, 'zipLongest'))];
  const fill = inv.kwargs.has('default') ? inv.kwargs.get('default') : null;
  const n = Math.max(...all.map((a) => a.length));
  return Array.from({ length: n }, (_, i) => all.map((a) => (i < a.length ? a[i] : fill)));
});
reg('flatten', 'M', 'collection', ([c]) => {
  const out: unknown[] = [];
  const walk = (a: unknown[]) => {
    for (const x of a) {
      if (isSeq(x)) walk(toArray(x));
      else out.push(x);
    }
  };
  walk(needIter(c, 'flatten'));
  return out;
});
reg('toList', 'M', 'collection', ([c]) => [...needIter(c, 'toList')]);
reg('add', 'M', 's, *values', ([s, ...values]) => {
  if (!(s instanceof PySet)) return noMatch('add');
  return new PySet([...s.values(), ...values]);
});
reg('remove', 'M', 's, *values', ([s, ...values]) => {
  if (!(s instanceof PySet)) return noMatch('remove');
  const drop = new PySet(values);
  return new PySet(s.values().filter((x) => !drop.has(x)));
});
reg('toSet', 'M', 'collection', ([c]) => new PySet(needIter(c, 'toSet')));
reg('toDict', 'M', 'collection, keySelector:λ, valueSelector?:λ', ([c, kf, vf]) => {
  const m = new Map<unknown, unknown>();
  for (const x of needIter(c, 'toDict')) m.set(hashableKey(kf(x)), given(vf) ? vf(x) : x);
  return m;
});
reg('reverse', 'M', 'collection', ([c]) => [...needIter(c, 'reverse')].reverse());
reg('append', 'MF', 'collection, *args', ([c, ...args]) => [...needIter(c, 'append'), ...args]);
reg('insert', 'M', 'collection, position, value', ([c, p, v]) => {
  const a = [...needIter(c, 'insert')];
  const pos = needInt(p, 'insert');
  // a sequence takes Python's list.insert (a negative position counts from the end); an
  // iterator takes yaql's generator, which never meets a negative index
  if (pos < 0 && !(Array.isArray(c) && !isIter(c))) return a;
  a.splice(pos < 0 ? Math.max(0, a.length + pos) : pos, 0, v);
  return a;
});
reg('insertMany', 'M', 'collection, position, values', ([c, p, vs]) => {
  const a = [...needIter(c, 'insertMany')];
  a.splice(Math.max(0, needInt(p, 'insertMany')), 0, ...needIter(vs, 'insertMany'));
  return a;
});
reg('replaceMany', 'M', 'collection, position, values, count?', ([c, p, vs, n]) => {
  const a = [...needIter(c, 'replaceMany')];
  const count = given(n) ? needInt(n, 'replaceMany') : 1;
  const position = needInt(p, 'replaceMany');
  const values = needIter(vs, 'replaceMany');
  // the items at indexes position <= i < position + count (all from position when count < 0) give
  // way to the values, once; a range that holds no index replaces nothing
  const out: unknown[] = [];
  let yielded = false;
  a.forEach((t, i) => {
    if ((count >= 0 && position <= i && i < position + count) || (count < 0 && i >= position)) {
      if (!yielded) out.push(...values);
      yielded = true;
    } else out.push(t);
  });
  return out;
});
reg('defaultIfEmpty', 'M', 'collection, default', ([c, d]) => {
  const a = needIter(c, 'defaultIfEmpty');
  const dflt = needIter(d, 'defaultIfEmpty');
  return a.length > 0 ? a : dflt;
});
reg('repeat', 'M', 'value, times?', ([v, t]) => {
  if (!given(t) || t === -1) {
    return new LazySeq(
      function* () {
        for (;;) yield v;
      },
      'itertools.repeat object',
      true,
    );
  }
  return Array.from({ length: Math.max(0, needInt(t, 'repeat')) }, () => v);
});
reg('cycle', 'M', 'collection', ([c]) => {
  const a = needIter(c, 'cycle');
  return new LazySeq(
    function* () {
      if (a.length === 0) return;
      for (;;) yield* a;
    },
    'itertools.cycle object',
    true,
  );
});
reg('memorize', 'M', 'collection', ([c]) => needIter(c, 'memorize'));
reg(['aggregate', 'reduce'], 'M', 'collection, selector:λ, seed?', ([c, f, seed]) => {
  const a = needIter(c, 'aggregate');
  let acc: unknown;
  let start = 0;
  if (given(seed)) acc = seed;
  else {
    if (a.length === 0) fail('reduce() of empty iterable with no initial value', 'TypeError');
    acc = a[0];
    start = 1;
  }
  for (let i = start; i < a.length; i++) acc = f(acc, a[i]);
  return acc;
});
reg('accumulate', 'M', 'collection, selector:λ, seed?', ([c, f, seed]) => {
  const a = needIter(c, 'accumulate');
  const out: unknown[] = [];
  let acc: unknown;
  let start = 0;
  if (given(seed)) acc = seed;
  else {
    if (a.length === 0) fail('accumulate() of empty sequence with no initial value', 'TypeError');
    acc = a[0];
    start = 1;
  }
  out.push(acc);
  for (let i = start; i < a.length; i++) {
    acc = f(acc, a[i]);
    out.push(acc);
  }
  return out;
});
reg('slice', 'M', 'collection, length', ([c, n]) => {
  const a = needIter(c, 'slice');
  const k = needInt(n, 'slice');
  // itertools.islice(collection, length) until it yields nothing: 0 gives no slices at all
  if (k < 0) fail(k === -1 ? ISLICE_STOP : ISLICE_START, 'ValueError');
  const out: unknown[][] = [];
  if (k === 0) return out;
  for (let i = 0; i < a.length; i += k) out.push(a.slice(i, i + k));
  return out;
});
reg('splitAt', 'M', 'collection, index', ([c, n]) => {
  const a = needIter(c, 'splitAt');
  const k = needInt(n, 'splitAt');
  return [a.slice(0, k), a.slice(k)];
});
reg('splitWhere', 'M', 'collection, predicate:λ', ([c, p]) => {
  const out: unknown[][] = [];
  let cur: unknown[] = [];
  for (const x of needIter(c, 'splitWhere')) {
    if (truthy(p(x))) {
      out.push(cur);
      cur = [];
    } else cur.push(x);
  }
  if (cur.length > 0) out.push(cur);
  return out;
});
reg('sliceWhere', 'M', 'collection, predicate:λ', ([c, p]) => {
  const out: unknown[][] = [];
  let prev: unknown = MISSING;
  for (const x of needIter(c, 'sliceWhere')) {
    const k = p(x);
    if (prev === MISSING || !pyEquals(k, prev)) out.push([]);
    out[out.length - 1]!.push(x);
    prev = k;
  }
  return out;
});
reg('isEmpty', 'MF', 'value, trim?, chars?', ([v, ts, ch], inv) => {
  if (given(ts) && typeof ts !== 'boolean') noMatch('isEmpty');
  if (v === null) return true;
  if (typeof v === 'string') {
    const trimmed = ts === false ? v : pyStrip(v, given(ch) ? (ch as string | null) : null, 'both');
    return trimmed.length === 0;
  }
  if (!('receiver' in inv)) return noMatch('isEmpty');
  return fail(
    `No method "isEmpty" for receiver ${yaqlStr(v)} matches supplied arguments`,
    'NoMatchingMethodException',
  );
});

function setOp(name: string, f: (l: unknown[], r: unknown[], rset: PySet) => unknown[]) {
  reg(name, 'M', 'left, right', ([l, r]) => {
    if (l instanceof PySet && r instanceof PySet) return new PySet(f(l.values(), r.values(), r));
    return fail(
      `No method "${name}" for receiver ${pyRepr(l, true)} matches supplied arguments`,
      'NoMatchingMethodException',
    );
  });
}
const dedupe = (a: unknown[]) => {
  const s = new PySet();
  return a.filter((x) => {
    if (s.has(x)) return false;
    s.add(x);
    return true;
  });
};
setOp('union', (l, r) => dedupe([...l, ...r]));
setOp('intersect', (l, _r, rs) => dedupe(l.filter((x) => rs.has(x))));
setOp('difference', (l, _r, rs) => dedupe(l.filter((x) => !rs.has(x))));
setOp('symmetricDifference', (l, r, rs) => {
  const ls = new PySet(l);
  return dedupe([...l.filter((x) => !rs.has(x)), ...r.filter((x) => !ls.has(x))]);
});

reg('concat', 'F', '*args', (args) => {
  if (args.every((a) => typeof a === 'string')) return args.join('');
  return chain(args.map((a) => needSeq(a, 'concat')));
});
reg('concat', 'M', 'collection, *args', ([c, ...args]) => {
  if (typeof c === 'string' && args.every((a) => typeof a === 'string')) return [c, ...args].join('');
  return chain([c, ...args].map((a) => needSeq(a, 'concat')));
});
/** itertools.chain: each collection read only when the previous one is exhausted. */
function chain(sources: unknown[]): LazySeq {
  return stream('itertools.chain object', function* () {
    for (const s of sources) yield* iterate(s);
  });
}

// ---------------------------------------------------------------------------------------------
// dictionaries

const needDict = (v: unknown, fname: string): Map<unknown, unknown> => (isDict(v) ? v : noMatch(fname));
reg('get', 'M', 'd, key, default?', ([d, k, dflt]) => {
  const m = needDict(d, 'get');
  if (dictHas(m, k)) return dictGet(m, k);
  return given(dflt) ? dflt : null;
});
reg('keys', 'M', 'd', ([d]) => markView([...needDict(d, 'keys').keys()], 'Keys', d as PyDict));
reg('values', 'M', 'd', ([d]) => markView([...needDict(d, 'values').values()], 'Values', d as PyDict));
reg('items', 'M', 'd', ([d]) => {
  const view = markView(
    [...needDict(d, 'items').entries()].map(([k, v]) => [k, v]),
    'Items',
    d as PyDict,
  );
  ITEMS_VIEWS.add(view);
  return view;
});
reg('containsKey', 'M', 'd, key', ([d, k]) => dictHas(needDict(d, 'containsKey'), k));
reg('containsValue', 'M', 'd, value', ([d, v]) =>
  [...needDict(d, 'containsValue').values()].some((x) => pyEquals(x, v)),
);
reg('set', 'M', 'd, *args, **kwargs', ([d, ...args], inv) => {
  const m = new Map(needDict(d, 'set'));
  if (args.length === 2 && !(args[0] instanceof MappingRule)) {
    m.set(hashableKey(args[0]), args[1]);
    return m;
  }
  if (args.length === 1 && isDict(args[0])) {
    for (const [k, v] of args[0]) m.set(k, v);
    return m;
  }
  for (const [k, v] of mappingToDict(args, inv.kwargs, 'set')) m.set(k, v);
  return m;
});
reg('delete', 'M', 'd, *args', ([d, ...args]) => {
  if (isDict(d)) {
    const m = new Map(d);
    for (const k of args) m.delete(dictKey(k));
    return m;
  }
  const a = [...needIter(d, 'delete')];
  const pos = needInt(args[0], 'delete');
  const count = args.length > 1 ? needInt(args[1], 'delete') : 1;
  // yaql's delete compares enumerate() indexes: a negative position is not counted from the end
  return a.filter((_x, i) => (count >= 0 ? !(pos <= i && i < pos + count) : i < pos));
});
reg('deleteAll', 'M', 'd, keys', ([d, keys]) => {
  const m = new Map(needDict(d, 'deleteAll'));
  for (const k of needIter(keys, 'deleteAll')) m.delete(dictKey(k));
  return m;
});
function mergeDicts(
  a: Map<unknown, unknown>,
  b: Map<unknown, unknown>,
  listMerger: Lambda,
  itemMerger: Lambda,
  maxLevels: number,
  level: number,
): Map<unknown, unknown> {
  const out = new Map<unknown, unknown>();
  for (const [k, v] of a) {
    if (!b.has(k)) {
      out.set(k, v);
      continue;
    }
    const w = b.get(k);
    if (maxLevels !== 0 && level >= maxLevels) out.set(k, w);
    else if (isDict(v) && isDict(w))
      out.set(k, mergeDicts(v, w, listMerger, itemMerger, maxLevels, level + 1));
    else if (isSeq(v) && isSeq(w)) out.set(k, listMerger(toArray(v), toArray(w)));
    else out.set(k, itemMerger(v, w));
  }
  for (const [k, w] of b) if (!a.has(k)) out.set(k, w);
  return out;
}
reg('mergeWith', 'M', 'd, another, listMerger?:λ, itemMerger?:λ, maxLevels?', ([d, other, lm, im, ml]) => {
  const listMerger = given(lm) ? lm : (x: unknown, y: unknown) => dedupe([...toArray(x), ...toArray(y)]);
  const itemMerger = given(im) ? im : (_x: unknown, y: unknown) => y;
  const maxLevels = given(ml) && ml !== null ? needInt(ml, 'mergeWith') : 0;
  return mergeDicts(
    needDict(d, 'mergeWith'),
    needDict(other, 'mergeWith'),
    listMerger,
    itemMerger,
    maxLevels,
    1,
  );
});

// ---------------------------------------------------------------------------------------------
// strings

function strIndexOf(s: string, sub: string, start: unknown, length: unknown, last: boolean): number {
  const cs = chars(s);
  const from = given(start) ? needInt(start, 'indexOf') : 0;
  const len = given(length) ? needInt(length, 'indexOf') : -1;
  const b = from < 0 ? Math.max(0, cs.length + from) : from;
  const e = len < 0 ? cs.length : Math.min(cs.length, b + len);
  const hay = cs.slice(b, e).join('');
  const i = last ? hay.lastIndexOf(sub) : hay.indexOf(sub);
  return i < 0 ? -1 : chars(hay.slice(0, i)).length + b;
}

reg('toUpper', 'M', 'string', ([s]) => needStr(s, 'toUpper').toUpperCase());
reg('toLower', 'M', 'string', ([s]) => needStr(s, 'toLower').toLowerCase());
reg('trim', 'M', 'string, chars?', ([s, c]) =>
  pyStrip(needStr(s, 'trim'), given(c) ? (c as string | null) : null, 'both'),
);
reg('trimLeft', 'M', 'string, chars?', ([s, c]) =>
  pyStrip(needStr(s, 'trimLeft'), given(c) ? (c as string | null) : null, 'left'),
);
reg('trimRight', 'M', 'string, chars?', ([s, c]) =>
  pyStrip(needStr(s, 'trimRight'), given(c) ? (c as string | null) : null, 'right'),
);
reg('norm', 'MF', 'string, chars?', ([s, c]) => {
  const t = pyStrip(needStr(s, 'norm'), given(c) ? (c as string | null) : null, 'both');
  return t.length === 0 ? null : t;
});
reg('startsWith', 'M', 'string, *prefixes', ([s, ...p]) =>
  p.some((x) => needStr(s, 'startsWith').startsWith(needStr(x, 'startsWith'))),
);
reg('endsWith', 'M', 'string, *suffixes', ([s, ...p]) =>
  p.some((x) => needStr(s, 'endsWith').endsWith(needStr(x, 'endsWith'))),
);
reg('substring', 'M', 'string, start, length?', ([s, st, ln]) => {
  const cs = chars(needStr(s, 'substring'));
  let start = needInt(st, 'substring');
  const length = given(ln) ? needInt(ln, 'substring') : -1;
  if (start < 0) start = Math.max(0, cs.length + start);
  return length < 0 ? cs.slice(start).join('') : cs.slice(start, start + length).join('');
});
reg('toCharArray', 'M', 'string', ([s]) => chars(needStr(s, 'toCharArray')));
// tuple(set(string)): distinct characters in an order Python's string hashing decides (first
// appearance here). `letters`, `lowercase` and `uppercase` name Python 2 constants: Python 3 raises.
reg(
  'characters',
  'F',
  'digits?, hexdigits?, asciiLowercase?, asciiUppercase?, asciiLetters?, letters?, octdigits?, punctuation?, printable?, lowercase?, uppercase?, whitespace?',
  (flags) => {
    const sets: Array<string | undefined> = [
      '0123456789',
      '0123456789abcdefABCDEF',
      'abcdefghijklmnopqrstuvwxyz',
      'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
      'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
      undefined,
      '01234567',
      '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
      '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r\x0b\x0c',
      undefined,
      undefined,
      ' \t\n\r\x0b\x0c',
    ];
    const out = new PySet();
    flags.forEach((f, i) => {
      if (!given(f) || !truthy(f)) return;
      const set = sets[i];
      if (set === undefined)
        return fail(
          `module 'string' has no attribute '${['letters', 'lowercase', 'uppercase'][[5, 9, 10].indexOf(i)]}'`,
          'AttributeError',
        );
      for (const ch of set) out.add(ch);
    });
    return out.values();
  },
);
reg('split', 'M', 'string, separator?, maxSplits?, **kwargs', ([s, sep, max], inv) => {
  // regexp.split(string, maxSplit => 0) and string.split(regexp, maxSplit => 0)
  if (!given(max) && inv.kwargs.has('maxSplit')) max = inv.kwargs.get('maxSplit');
  if ([...inv.kwargs.keys()].some((k) => k !== 'maxSplit')) noMatch('split');
  if (s instanceof YaqlRegex)
    return regexSplit(needStr(sep, 'split'), s.re, given(max) ? needInt(max, 'split') : 0);
  const str = needStr(s, 'split');
  const m = given(max) ? needInt(max, 'split') : -1;
  if (sep instanceof YaqlRegex) return regexSplit(str, sep.re, given(max) ? m : 0);
  return pySplit(str, given(sep) ? (sep === null ? null : needStr(sep, 'split')) : null, m, false);
});
reg('rightSplit', 'M', 'string, separator?, maxSplits?', ([s, sep, max]) =>
  pySplit(
    needStr(s, 'rightSplit'),
    given(sep) ? (sep === null ? null : needStr(sep, 'rightSplit')) : null,
    given(max) ? needInt(max, 'rightSplit') : -1,
    true,
  ),
);
reg('join', 'M', 'a, b, c?:λ, d?:λ', ([a, b, c, d]) => {
  if (given(c) || given(d)) {
    // collection1.join(collection2, predicate, selector): selector($1, $2) for every pair whose
    // predicate($1, $2) holds, collection1 in the outer loop.
    if (!given(c) || !given(d) || !isSeq(a) || !isSeq(b)) return noMatch('join');
    const right = toArray(b);
    const out: unknown[] = [];
    for (const x of toArray(a)) for (const y of right) if (truthy(c(x, y))) out.push(d(x, y));
    return markIter(out);
  }
  const render = (x: unknown) => yaqlStr(x);
  if (typeof a === 'string' && isSeq(b)) return toArray(b).map(render).join(a);
  if (isSeq(a) && typeof b === 'string') return toArray(a).map(render).join(b);
  return noMatch('join');
});
reg('replace', 'M', 'string, old, new?, count?', ([s, old, nw, cnt]) => {
  if (s instanceof YaqlRegex) {
    // regexp.replace(string, repl, count => 0)
    if (!given(nw)) noMethod('replace', s);
    const count = given(cnt) ? needInt(cnt, 'replace') : 0;
    return regexReplace(needStr(old, 'replace'), s.re, needStr(nw, 'replace'), count === 0 ? -1 : count);
  }
  if (isSeq(s)) {
    // collection.replace(position, value, count => 1): count items from position become value
    // (a negative count replaces to the end); positions outside the collection change nothing.
    const items = needIter(s, 'replace');
    const pos = needInt(old, 'replace');
    if (!given(nw)) noMatch('replace');
    const count = given(cnt) ? needInt(cnt, 'replace') : 1;
    const out: unknown[] = [];
    items.forEach((x, i) => {
      const hit = i >= pos && (count < 0 || i < pos + count);
      if (!hit) out.push(x);
      else if (i === pos) out.push(nw);
    });
    return markIter(out);
  }
  const str = needStr(s, 'replace');
  if (isDict(old)) {
    let out = str;
    const count = given(nw) ? needInt(nw, 'replace') : -1;
    for (const [k, v] of old) out = replaceCount(out, yaqlStr(k), yaqlStr(v), count);
    return out;
  }
  const count = given(cnt) ? needInt(cnt, 'replace') : -1;
  if (!given(nw)) return noMatch('replace');
  // re.sub's count: 0 replaces every match.
  if (old instanceof YaqlRegex)
    return regexReplace(str, old.re, needStr(nw, 'replace'), count === 0 ? -1 : count);
  return replaceCount(str, needStr(old, 'replace'), needStr(nw, 'replace'), count);
});
function replaceCount(s: string, old: string, nw: string, count: number): string {
  if (count < 0) {
    if (old === '')
      return (
        chars(s)
          .map((c) => nw + c)
          .join('') + nw
      );
    return s.split(old).join(nw);
  }
  let out = '';
  let rest = s;
  for (let i = 0; i < count; i++) {
    if (old === '') {
      out += nw + (rest[0] ?? '');
      if (rest.length === 0) return out;
      rest = rest.slice(1);
      continue;
    }
    const j = rest.indexOf(old);
    if (j < 0) break;
    out += rest.slice(0, j) + nw;
    rest = rest.slice(j + old.length);
  }
  return out + rest;
}
reg('format', 'MF', 'format, *args, **kwargs', ([f, ...args], inv) =>
  pyFormat(needStr(f, 'format'), args, inv.kwargs, (v) => (typeof v === 'string' ? v : pyRepr(v, true))),
);

// ---------------------------------------------------------------------------------------------
// regular expressions

reg('regex', 'F', 'pattern, ignoreCase?, multiLine?, dotAll?', ([p, ic, ml, da]) => {
  let flags = '';
  if (given(ic) && truthy(ic)) flags += 'i';
  if (given(ml) && truthy(ml)) flags += 'm';
  if (given(da) && truthy(da)) flags += 's';
  return new YaqlRegex(needStr(p, 'regex'), compilePyRegex(needStr(p, 'regex'), flags));
});
// Python 3.7+ re.escape: only the characters special in a pattern (and whitespace)
reg('escapeRegex', 'F', 'string', ([s]) =>
  needStr(s, 'escapeRegex').replace(/[()[\]{}?*+\-|^$\\.&~# \t\n\r\v\f]/g, (c) => `\\${c}`),
);
reg('matches', 'M', 'a, b', ([a, b]) => {
  if (a instanceof YaqlRegex) return a.re.test(needStr(b, 'matches'));
  return regexOf(b, 'matches').test(needStr(a, 'matches'));
});
/**
 * yaql's _publish_match: the selector sees the whole match as `$` and `$1`, group i as `$<i+1>`,
 * each as {value, start, end} (an unmatched group: value null, start and end -1).
 */
function publishedMatch(m: RegExpExecArray): unknown[] {
  const recs: unknown[] = [];
  for (let i = 0; i < m.length; i++) {
    const span = m.indices?.[i];
    recs.push(
      markPlainDict(
        new Map<unknown, unknown>([
          ['value', m[i] ?? null],
          ['start', span ? span[0] : -1],
          ['end', span ? span[1] : -1],
        ]),
      ),
    );
  }
  const named = m.groups ? Object.values(m.groups) : [];
  if (named.length === 0) return recs;
  // yaql 2.0 loops `for key, value, in match.groupdict().values()`: each named group's text is
  // unpacked into two characters, the second taken for a group name (a reference bug, mirrored
  // because it decides whether the selector runs at all)
  const vars = new Map<string, unknown>();
  for (const text of named) {
    if (text === undefined) fail('cannot unpack non-iterable NoneType object', 'TypeError');
    const cs = chars(text);
    if (cs.length > 2) fail('too many values to unpack (expected 2)', 'ValueError');
    if (cs.length < 2) fail(`not enough values to unpack (expected 2, got ${cs.length})`, 'ValueError');
    const [key, group] = cs as [string, string];
    const span = m.indices?.groups?.[group];
    if (!m.groups || !(group in m.groups)) fail('no such group', 'IndexError');
    vars.set(
      key,
      markPlainDict(
        new Map<unknown, unknown>([
          ['value', group],
          ['start', span ? span[0] : -1],
          ['end', span ? span[1] : -1],
        ]),
      ),
    );
  }
  return [...recs, new LambdaVars(vars)];
}
function searchImpl(re: RegExp, s: string, selector: unknown, all: boolean): unknown {
  const g = new RegExp(re.source, `${re.flags.replace(/[gd]/g, '')}gd`);
  const results: unknown[] = [];
  for (let m = g.exec(s); m; m = g.exec(s)) {
    const r = given(selector) ? (selector as Lambda)(...publishedMatch(m)) : m[0];
    if (!all) return r;
    results.push(r);
    if (m[0] === '') g.lastIndex++;
  }
  return all ? results : null;
}
const noMethod = (name: string, receiver: unknown): never =>
  fail(
    `No method "${name}" for receiver ${yaqlStr(receiver)} matches supplied arguments`,
    'NoMatchingMethodException',
  );
reg('search', 'M', 'regexp, string, selector?:λ', ([a, b, sel]) =>
  a instanceof YaqlRegex ? searchImpl(a.re, needStr(b, 'search'), sel, false) : noMethod('search', a),
);
reg('searchAll', 'M', 'regexp, string, selector?:λ', ([a, b, sel]) =>
  a instanceof YaqlRegex ? searchImpl(a.re, needStr(b, 'searchAll'), sel, true) : noMethod('searchAll', a),
);
/** Python's re.split(string, maxsplit): 0 splits at every match, a negative count not at all. */
function regexSplit(s: string, re: RegExp, max: number): string[] {
  if (max < 0) return [s];
  if (max === 0) max = -1;
  const g = new RegExp(re.source, `${re.flags.replace('g', '')}g`);
  const out: string[] = [];
  let last = 0;
  let n = 0;
  for (let m = g.exec(s); m && (max < 0 || n < max); m = g.exec(s)) {
    if (m[0] === '') {
      g.lastIndex++;
      if (m.index === 0 || m.index >= s.length) continue;
    }
    out.push(s.slice(last, m.index), ...m.slice(1).map((x) => x ?? ''));
    last = m.index + m[0].length;
    n++;
  }
  out.push(s.slice(last));
  return out;
}
function regexReplace(s: string, re: RegExp, repl: string, count: number): string {
  const g = new RegExp(re.source, `${re.flags.replace('g', '')}g`);
  const groups = new RegExp(`${re.source}|`, re.flags.replace('g', '')).exec('')!.length - 1;
  for (const ref of repl.matchAll(/\\(\d+)|\\g<(\d+)>/g)) {
    const n = Number(ref[1] ?? ref[2]);
    if (n > groups) fail(`invalid group reference ${n} at position ${(ref.index ?? 0) + 1}`, 'error');
  }
  let n = 0;
  const jsRepl = repl
    .replace(/\$/g, '$$$$')
    .replace(/\\(\d+)|\\g<(\w+)>/g, (_m, d: string, name: string) =>
      d ? `$${d}` : /^\d+$/.test(name) ? `$${name}` : `$<${name}>`,
    );
  return s.replace(g, (...m) => {
    if (count >= 0 && n >= count) return m[0] as string;
    n++;
    return (m[0] as string).replace(new RegExp(re.source, re.flags.replace('g', '')), jsRepl);
  });
}
reg('replaceBy', 'M', 'string, regexp, repl:λ, count?', ([s0, r0, f, cnt]) => {
  // string.replaceBy(regexp, repl, count) and regexp.replaceBy(string, repl, count)
  const [s, r] = s0 instanceof YaqlRegex ? [r0, s0] : [s0, r0];
  const str = needStr(s, 'replaceBy');
  const re = regexOf(r, 'replaceBy');
  const g = new RegExp(re.source, `${re.flags.replace(/[gd]/g, '')}gd`);
  // re.sub's count: 0 replaces every match, a negative count none
  const count = given(cnt) ? needInt(cnt, 'replaceBy') : 0;
  // re.sub joins [text before, replacement, text between, replacement, …, rest], leaving out
  // empty stretches of text: a replacement that is not a string is refused by its index there
  const pieces: string[] = [];
  let last = 0;
  let n = 0;
  for (let m = g.exec(str); m && (count === 0 || n < count); m = g.exec(str), n++) {
    if (m.index > last) pieces.push(str.slice(last, m.index));
    const out = f(...publishedMatch(m));
    if (typeof out !== 'string')
      fail(`sequence item ${pieces.length}: expected str instance, ${yaqlTypeName(out)} found`, 'TypeError');
    pieces.push(out);
    last = m.index + m[0].length;
    if (m[0] === '') g.lastIndex++;
  }
  pieces.push(str.slice(last));
  return pieces.join('');
});

export { dictKey };
