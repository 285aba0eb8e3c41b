import { fail } from '../errors';
import type { ExpressionHost } from '../host';
import { type MistralCall, mistralFunctions, pyJsonDumps } from '../mistral-functions';
import {
  compilePyRegex,
  complexArith,
  pyComplexPow,
  pyFormat,
  pyPow,
  pyRound,
  pySplit,
  pyStrip,
} from '../python';
import {
  PyComplex,
  checkSize,
  dictGet,
  dictHas,
  dictKey,
  isDict,
  isFloat,
  isInt,
  isIter,
  isTuple,
  isNumber,
  bigOf,
  mkInt,
  PyBigInt,
  LazySeq,
  markTuple,
  mkFloat,
  num,
  pyCompare,
  pyEquals,
  pyRepr,
  PySet,
  pyStr,
  pyTypeName,
  toArray,
  truthy,
} from '../values';
import { lipsum, pformat, urlize, wordwrap } from './extras';
import type { JNode, Stmt } from './parser';

/**
 * Jinja2 evaluation with SandboxedEnvironment + StrictUndefined semantics on the shared value
 * model. Nothing here can reach a JS object that was not built by the evaluator: attribute access
 * goes through explicit tables of Python methods, names starting with `_` are refused as the
 * sandbox does, and host data was converted to Maps/arrays before evaluation.
 */

/** A Jinja undefined value; strict ones raise as soon as they are used. */
export class JUndefined {
  constructor(
    readonly hint: string,
    readonly strict = true,
    readonly security = false,
  ) {}
  raise(): never {
    return fail(this.hint, this.security ? 'SecurityError' : 'UndefinedError');
  }
}

/** A callable value: a bound Python method, a global function or `loop.cycle`. */
export class JCallable {
  constructor(
    readonly name: string,
    readonly fn: (args: unknown[], kwargs: Map<string, unknown>) => unknown,
  ) {}
}

/**
 * An object of jinja2.utils (cycler, namespace): attributes come from `attr` (undefined when it
 * has none), `repr` is its Python repr.
 */
export class JObject {
  constructor(
    readonly typeName: string,
    readonly attr: (name: string) => unknown,
    readonly repr: () => string,
  ) {}
}

export interface JEnv {
  host: ExpressionHost;
  data: unknown;
}

class Frame {
  readonly vars = new Map<string, unknown>();
  constructor(readonly parent: Frame | null) {}
  lookup(name: string): unknown {
    if (this.vars.has(name)) return this.vars.get(name);
    return this.parent ? this.parent.lookup(name) : MISSING;
  }
}
const MISSING = Symbol('missing');

/** Own-property lookup only: a name like `constructor` must never reach Object.prototype. */
export const own = <T>(table: Record<string, T>, key: string): T | undefined =>
  Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;

const objRepr = (v: unknown): string =>
  v === null ? 'None' : `${isIter(v) ? 'generator' : pyTypeName(v)} object`;

/** Raises when `v` is a strict undefined; returns it otherwise. */
export function use(v: unknown): unknown {
  if (v instanceof JUndefined && (v.strict || v.security)) v.raise();
  return v;
}
const useValue = (v: unknown): unknown => {
  use(v);
  return v instanceof JUndefined ? '' : v;
};

/** Python's int(s, base) for a str (underscores between digits, 0x/0o/0b prefixes), or null where it raises ValueError. */
function pyIntFromString(s: string, base: number): number | null {
  if (base !== 0 && (base < 2 || base > 36)) return null;
  const m = /^([+-]?)(.*)$/s.exec(s.trim());
  if (!m) return null;
  let body = m[2] ?? '';
  let b = base;
  const prefix = /^0([xob])/i.exec(body);
  const prefixBase = prefix ? { x: 16, o: 8, b: 2 }[(prefix[1] ?? '').toLowerCase() as 'x' | 'o' | 'b'] : 0;
  if (prefix && (base === 0 || base === prefixBase)) {
    b = prefixBase;
    body = body.slice(2).replace(/^_/, '');
  } else if (base === 0) {
    b = 10;
    if (/^0+(_?0)*$/.test(body)) return 0;
    if (body.startsWith('0')) return null; // `017` is not a base-0 literal
  }
  if (!/^[0-9a-z]+(_[0-9a-z]+)*$/i.test(body)) return null;
  const digits = body.replace(/_/g, '').toLowerCase();
  let n = 0;
  for (const ch of digits) {
    const d = parseInt(ch, 36);
    if (d >= b) return null;
    n = n * b + d;
  }
  return m[1] === '-' ? -n : n;
}

/** Python's float(v) for the values Jinja sees (errors as Python raises them). */
function pyFloatOf(v: unknown): number {
  use(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (isNum(v)) return nv(v);
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return parseFloat(t);
    if (/^[+-]?(inf|infinity)$/.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
    if (/^[+-]?nan$/.test(t)) return NaN;
    return fail(`could not convert string to float: ${pyRepr(v)}`, 'ValueError');
  }
  return typeErr(`float() argument must be a string or a real number, not '${pyName(v)}'`);
}

function typeErr(msg: string): never {
  return fail(msg, 'TypeError');
}

/** Jinja's select/map/unique/... return generators: computed only when iterated, always true. */
const lazy = (produce: () => unknown[], label = 'generator object'): LazySeq =>
  new LazySeq(function* () {
    yield* produce();
  }, label);

const pyName = (v: unknown): string =>
  v instanceof JCallable ? 'builtin_function_or_method' : isIter(v) ? 'generator' : pyTypeName(v);

// ---------------------------------------------------------------------------------------------
// Python methods reachable through attribute access

const arg = (args: unknown[], i: number, dflt: unknown = undefined): unknown =>
  i < args.length ? args[i] : dflt;
const strArg = (v: unknown, what: string): string =>
  typeof v === 'string' ? v : typeErr(`${what} must be str, not ${pyName(v)}`);

const STR_METHODS: Record<string, (s: string, args: unknown[], kwargs: Map<string, unknown>) => unknown> = {
  upper: (s) => s.toUpperCase(),
  lower: (s) => s.toLowerCase(),
  title: (s) => titleCase(s),
  capitalize: (s) => capitalize(s),
  strip: (s, a) => pyStrip(s, (arg(a, 0, null) as string | null) ?? null, 'both'),
  lstrip: (s, a) => pyStrip(s, (arg(a, 0, null) as string | null) ?? null, 'left'),
  rstrip: (s, a) => pyStrip(s, (arg(a, 0, null) as string | null) ?? null, 'right'),
  split: (s, a, k) =>
    pySplit(
      s,
      (arg(a, 0, k.get('sep') ?? null) as string | null) ?? null,
      Number(arg(a, 1, k.get('maxsplit') ?? -1)),
      false,
    ),
  rsplit: (s, a, k) =>
    pySplit(
      s,
      (arg(a, 0, k.get('sep') ?? null) as string | null) ?? null,
      Number(arg(a, 1, k.get('maxsplit') ?? -1)),
      true,
    ),
  splitlines: (s) => s.split(/\r\n|\r|\n/).filter((x, i, all) => i < all.length - 1 || x !== ''),
  startswith: (s, a) => {
    const p = arg(a, 0);
    return Array.isArray(p)
      ? p.some((x) => s.startsWith(strArg(x, 'prefix')))
      : s.startsWith(strArg(p, 'startswith first arg'));
  },
  endswith: (s, a) => {
    const p = arg(a, 0);
    return Array.isArray(p)
      ? p.some((x) => s.endsWith(strArg(x, 'suffix')))
      : s.endsWith(strArg(p, 'endswith first arg'));
  },
  replace: (s, a) => {
    const old = strArg(arg(a, 0), 'replace() argument 1');
    const nw = strArg(arg(a, 1), 'replace() argument 2');
    const count = Number(arg(a, 2, -1));
    if (count < 0) return s.split(old).join(nw);
    let out = s;
    let from = 0;
    for (let i = 0; i < count; i++) {
      const j = out.indexOf(old, from);
      if (j < 0) break;
      out = out.slice(0, j) + nw + out.slice(j + old.length);
      from = j + nw.length;
    }
    return out;
  },
  find: (s, a) => s.indexOf(strArg(arg(a, 0), 'find')),
  rfind: (s, a) => s.lastIndexOf(strArg(arg(a, 0), 'rfind')),
  index: (s, a) => {
    const i = s.indexOf(strArg(arg(a, 0), 'index'));
    return i < 0 ? fail('substring not found', 'ValueError') : i;
  },
  count: (s, a) => {
    const sub = strArg(arg(a, 0), 'count');
    return sub === '' ? Array.from(s).length + 1 : s.split(sub).length - 1;
  },
  join: (s, a) =>
    toArray(arg(a, 0))
      .map((x) =>
        typeof x === 'string' ? x : typeErr(`sequence item: expected str instance, ${pyName(x)} found`),
      )
      .join(s),
  format: (s, a, k) => pyFormat(s, a, k, pyStr),
  isdigit: (s) => /^\d+$/.test(s),
  isalpha: (s) => /^\p{L}+$/u.test(s),
  isalnum: (s) => /^[\p{L}\p{N}]+$/u.test(s),
  isspace: (s) => /^\s+$/.test(s),
  islower: (s) => s !== s.toUpperCase() && s === s.toLowerCase(),
  isupper: (s) => s !== s.toLowerCase() && s === s.toUpperCase(),
  zfill: (s, a) => {
    const w = Number(arg(a, 0));
    const sign = /^[+-]/.test(s) ? s[0]! : '';
    return sign + s.slice(sign.length).padStart(w - sign.length, '0');
  },
  center: (s, a) => center(s, Number(arg(a, 0)), String(arg(a, 1, ' '))),
  ljust: (s, a) => s.padEnd(Number(arg(a, 0)), String(arg(a, 1, ' '))),
  rjust: (s, a) => s.padStart(Number(arg(a, 0)), String(arg(a, 1, ' '))),
};
const LIST_METHODS: Record<string, (l: unknown[], args: unknown[]) => unknown> = {
  index: (l, a) => {
    const i = l.findIndex((x) => pyEquals(x, arg(a, 0)));
    return i < 0 ? fail(`${pyRepr(arg(a, 0))} is not in list`, 'ValueError') : i;
  },
  count: (l, a) => l.filter((x) => pyEquals(x, arg(a, 0))).length,
};
const DICT_METHODS: Record<string, (d: Map<unknown, unknown>, args: unknown[]) => unknown> = {
  keys: (d) => [...d.keys()],
  values: (d) => [...d.values()],
  items: (d) => [...d.entries()].map(([k, v]) => markTuple([k, v])),
  get: (d, a) => (dictHas(d, arg(a, 0)) ? dictGet(d, arg(a, 0)) : arg(a, 1, null)),
};

/** Python's str.title(): a cased letter is upper after an uncased character, lower otherwise. */
function titleCase(s: string): string {
  let out = '';
  let prevCased = false;
  for (const ch of s) {
    const cased = ch.toLowerCase() !== ch.toUpperCase();
    out += cased ? (prevCased ? ch.toLowerCase() : ch.toUpperCase()) : ch;
    prevCased = cased;
  }
  return out;
}

/** Jinja's `title` filter: words start after `-`, whitespace, `(`, `{`, `[` or `<`. */
function jinjaTitle(s: string): string {
  return s
    .split(/([-\s({[<]+)/u)
    .filter((item) => item.length > 0)
    .map((item) => {
      const chars = Array.from(item);
      return chars[0]!.toUpperCase() + chars.slice(1).join('').toLowerCase();
    })
    .join('');
}
function capitalize(s: string): string {
  return s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1).toLowerCase();
}
function center(s: string, width: number, fill = ' '): string {
  const len = Array.from(s).length;
  if (len >= width) return s;
  const pad = width - len;
  const left = Math.floor(pad / 2) + (pad & width & 1);
  return fill.repeat(left) + s + fill.repeat(pad - left);
}

/** Sandboxed `obj.name`. */
export function getattr(obj: unknown, name: string): unknown {
  use(obj);
  if (/^__.*__$/.test(name) || obj instanceof JCallable) {
    // Python objects all carry dunder attributes; the sandbox refuses every one of them.
    return new JUndefined(
      `access to attribute '${name}' of '${obj instanceof JCallable ? 'function' : pyName(obj)}' object is unsafe.`,
      true,
      true,
    );
  }
  if (obj instanceof JObject) {
    const v = name.startsWith('_') ? undefined : obj.attr(name);
    if (v !== undefined) return v;
    return new JUndefined(`'jinja2.utils.${obj.typeName} object' has no attribute ${pyRepr(name)}`);
  }
  if (isDict(obj)) {
    const m = name.startsWith('_') ? undefined : own(DICT_METHODS, name);
    if (m) return new JCallable(name, (a) => m(obj, a));
    if (obj.has(name)) return obj.get(name);
  } else if (typeof obj === 'string') {
    const m = own(STR_METHODS, name);
    if (m) return new JCallable(name, (a, k) => m(obj, a.map(useValue), k));
  } else if (Array.isArray(obj) && !isIter(obj)) {
    const m = own(LIST_METHODS, name);
    if (m) return new JCallable(name, (a) => m(obj, a.map(useValue)));
  }
  return new JUndefined(`'${objRepr(obj)}' has no attribute ${pyRepr(name)}`);
}

/** Sandboxed `obj[key]`: item first, then attribute for string keys (Jinja's getitem). */
export function getitem(obj: unknown, key: unknown): unknown {
  use(obj);
  use(key);
  if (isDict(obj)) {
    if (dictHas(obj, key)) return dictGet(obj, key);
  } else if (((Array.isArray(obj) && !isIter(obj)) || typeof obj === 'string') && isInt(key)) {
    const seq = typeof obj === 'string' ? Array.from(obj) : obj;
    const i = key < 0 ? seq.length + key : key;
    if (i >= 0 && i < seq.length) return seq[i];
  }
  if (typeof key === 'string') return getattr(obj, key);
  return new JUndefined(`${objRepr(obj)} has no element ${pyRepr(dictKey(key))}`);
}

function sliceOf(obj: unknown, start: unknown, stop: unknown, step: unknown): unknown {
  use(obj);
  if (obj instanceof LazySeq) typeErr("'generator' object is not subscriptable");
  // Jinja compiles slices to plain Python subscripts: slicing a non-sequence is a TypeError.
  if (typeof obj !== 'string' && !(Array.isArray(obj) && !isIter(obj)))
    typeErr(`'${pyName(obj)}' object is not subscriptable`);
  const seq = typeof obj === 'string' ? Array.from(obj) : obj;
  const n = seq.length;
  const st = step === null ? 1 : Number(step);
  if (st === 0) fail('slice step cannot be zero', 'ValueError');
  const norm = (v: unknown, dflt: number): number => {
    if (v === null) return dflt;
    let x = Number(v);
    if (x < 0) x += n;
    return st > 0 ? Math.min(Math.max(x, 0), n) : Math.min(Math.max(x, -1), n - 1);
  };
  const b = norm(start, st > 0 ? 0 : n - 1);
  const e = norm(stop, st > 0 ? n : -1);
  const out: unknown[] = [];
  for (let i = b; st > 0 ? i < e : i > e; i += st) out.push(seq[i]);
  if (typeof obj === 'string') return out.join('');
  return isTuple(obj) ? markTuple(out) : out;
}

// ---------------------------------------------------------------------------------------------
// operators (Python semantics)

const isNum = (v: unknown): boolean => isNumber(v) || typeof v === 'boolean';
const nv = (v: unknown): number => (typeof v === 'boolean' ? (v ? 1 : 0) : num(v as number));
const flt = (a: unknown, b: unknown): boolean => isFloat(a) || isFloat(b);

/**
 * Python int arithmetic beyond 2^53: the exact result (a PyBigInt when big) of `+ - * // % **` on
 * two ints when a side is already big or the double result left JS's exact range; undefined when
 * the plain number path is exact (or raises: division by zero, negative powers).
 */
function exactIntOp(op: string, a: unknown, b: unknown): unknown {
  const isIntLike = (v: unknown) => isInt(v) || typeof v === 'boolean';
  if (!isIntLike(a) || !isIntLike(b)) return undefined;
  const x = nv(a);
  const y = nv(b);
  const approx: Record<string, number> = {
    '+': x + y,
    '-': x - y,
    '*': x * y,
    '//': Math.floor(x / y),
    '%': x - y * Math.floor(x / y),
    '**': x ** y,
  };
  if (!(op in approx)) return undefined;
  const big = (a as unknown) instanceof PyBigInt || (b as unknown) instanceof PyBigInt;
  if (!big && Number.isSafeInteger(approx[op])) return undefined;
  const p = bigOf(a);
  const q = bigOf(b);
  if ((op === '//' || op === '%') && q === 0n) return undefined;
  if (op === '**' && q < 0n) return undefined;
  const floorDiv = (m: bigint, n: bigint): bigint => (m % n !== 0n && m < 0n !== n < 0n ? m / n - 1n : m / n);
  switch (op) {
    case '+':
      return mkInt(p + q);
    case '-':
      return mkInt(p - q);
    case '*':
      return mkInt(p * q);
    case '//':
      return mkInt(floorDiv(p, q));
    case '%':
      return mkInt(p - q * floorDiv(p, q));
    default:
      if (y * Math.log10(Math.max(2, Math.abs(x))) > 100_000)
        fail('Expression result exceeds the integer size quota', 'MemoryQuotaExceededException');
      return mkInt(p ** q);
  }
}

function binop(op: string, a: unknown, b: unknown): unknown {
  use(a);
  use(b);
  const exact = exactIntOp(op, a, b);
  if (exact !== undefined) return exact;
  const complex = complexArith(op, a, b);
  if (complex) return complex;
  const unsupported = (): never =>
    typeErr(`unsupported operand type(s) for ${op}: '${pyName(a)}' and '${pyName(b)}'`);
  switch (op) {
    case '+':
      if (isNum(a) && isNum(b)) return flt(a, b) ? mkFloat(nv(a) + nv(b)) : nv(a) + nv(b);
      if (typeof a === 'string') {
        if (typeof b !== 'string') typeErr(`can only concatenate str (not "${pyName(b)}") to str`);
        checkSize(a.length + (b as string).length, 'string');
        return a + (b as string);
      }
      if (Array.isArray(a) && Array.isArray(b)) {
        if (isTuple(a) !== isTuple(b))
          typeErr(`can only concatenate ${pyName(a)} (not "${pyName(b)}") to ${pyName(a)}`);
        checkSize(a.length + b.length, 'collection');
        return isTuple(a) ? markTuple([...a, ...b]) : [...a, ...b];
      }
      return unsupported();
    case '-':
      if (isNum(a) && isNum(b)) return flt(a, b) ? mkFloat(nv(a) - nv(b)) : nv(a) - nv(b);
      if (a instanceof PySet && b instanceof PySet) return new PySet(a.values().filter((x) => !b.has(x)));
      return unsupported();
    case '*':
      if (isNum(a) && isNum(b)) return flt(a, b) ? mkFloat(nv(a) * nv(b)) : nv(a) * nv(b);
      // bool is an int in Python: `'ab' * true` repeats once.
      if (typeof b === 'boolean' && (typeof a === 'string' || Array.isArray(a)))
        return binop('*', a, b ? 1 : 0);
      if (typeof a === 'boolean' && (typeof b === 'string' || Array.isArray(b)))
        return binop('*', a ? 1 : 0, b);
      if (typeof a === 'string' && isInt(b))
        return a.repeat(checkSize(Math.max(0, b) * a.length, 'string') && Math.max(0, b));
      if (isInt(a) && typeof b === 'string')
        return b.repeat(checkSize(Math.max(0, a) * b.length, 'string') && Math.max(0, a));
      if (Array.isArray(a) && isInt(b)) {
        checkSize(Math.max(0, b) * a.length, 'collection');
        return Array.from({ length: Math.max(0, b) }, () => a).flat();
      }
      if (isInt(a) && Array.isArray(b)) {
        checkSize(Math.max(0, a) * b.length, 'collection');
        return Array.from({ length: Math.max(0, a) }, () => b).flat();
      }
      return typeErr(`can't multiply sequence by non-int of type '${pyName(b)}'`);
    case '/':
      if (!isNum(a) || !isNum(b)) return unsupported();
      if (nv(b) === 0) fail('division by zero', 'ZeroDivisionError');
      return mkFloat(nv(a) / nv(b));
    case '//':
      if (!isNum(a) || !isNum(b)) return unsupported();
      if (nv(b) === 0) fail('integer division or modulo by zero', 'ZeroDivisionError');
      return flt(a, b) ? mkFloat(Math.floor(nv(a) / nv(b))) : Math.floor(nv(a) / nv(b));
    case '%':
      if (typeof a === 'string') return printf(a, b);
      if (!isNum(a) || !isNum(b)) return unsupported();
      if (nv(b) === 0) fail('integer division or modulo by zero', 'ZeroDivisionError');
      {
        const m = nv(a) - nv(b) * Math.floor(nv(a) / nv(b));
        return flt(a, b) ? mkFloat(m) : m;
      }
    case '**':
      if (!isNum(a) || !isNum(b)) return unsupported();
      if (!flt(a, b) && nv(b) >= 0) return nv(a) ** nv(b);
      if (nv(a) === 0 && nv(b) < 0) fail('0.0 cannot be raised to a negative power', 'ZeroDivisionError');
      {
        // a negative base to a fractional power is a complex number in Python
        const c = pyComplexPow(nv(a), nv(b));
        if (c) return c;
        const p = pyPow(nv(a), nv(b));
        // C's pow reports ERANGE for a finite result too large for a double
        if ((p === Infinity || p === -Infinity) && Number.isFinite(nv(a)) && Number.isFinite(nv(b)))
          fail("(34, 'Numerical result out of range')", 'OverflowError');
        return mkFloat(p);
      }
    default:
      return unsupported();
  }
}

/** Python printf-style formatting (`'%s-%d' % (a, b)`, the `format` filter). */
export function printf(fmt: string, values: unknown): string {
  const named = isDict(values) && fmt.includes('%(') ? values : null;
  const list = named
    ? []
    : Array.isArray(values) && (values as unknown[]).length !== undefined && isTupleLike(values)
      ? (values as unknown[])
      : [values];
  let idx = 0;
  const out = fmt.replace(
    /%(\(([^)]*)\))?([#0\- +]*)(\d+|\*)?(?:\.(\d+))?([diouxXeEfFgGcrsa%])/g,
    (
      _m,
      _n,
      key: string | undefined,
      flags: string,
      width: string | undefined,
      prec: string | undefined,
      conv: string,
    ) => {
      if (conv === '%') return '%';
      let v: unknown;
      if (key !== undefined) {
        if (!named) return typeErr('format requires a mapping');
        if (!dictHas(named, key)) fail(pyRepr(key), 'KeyError');
        v = dictGet(named, key);
      } else {
        if (idx >= list.length) typeErr('not enough arguments for format string');
        v = list[idx++];
      }
      use(v);
      let body: string;
      switch (conv) {
        case 's':
          body = pyStr(v);
          break;
        case 'r':
        case 'a':
          body = pyRepr(v);
          break;
        case 'd':
        case 'i':
        case 'u':
          if (!isNum(v)) typeErr(`%${conv} format: a real number is required, not ${pyName(v)}`);
          body = String(Math.trunc(nv(v)));
          break;
        case 'f':
        case 'F':
          if (!isNum(v)) typeErr(`must be real number, not ${pyName(v)}`);
          body = nv(v).toFixed(prec === undefined ? 6 : Number(prec));
          break;
        case 'e':
        case 'E': {
          if (!isNum(v)) typeErr(`must be real number, not ${pyName(v)}`);
          const [mant, ex] = nv(v)
            .toExponential(prec === undefined ? 6 : Number(prec))
            .split('e') as [string, string];
          body = `${mant}e${ex[0] === '-' ? '-' : '+'}${ex.replace(/^[+-]/, '').padStart(2, '0')}`;
          if (conv === 'E') body = body.toUpperCase();
          break;
        }
        case 'g':
        case 'G':
          if (!isNum(v)) typeErr(`must be real number, not ${pyName(v)}`);
          body = String(Number(nv(v).toPrecision(prec === undefined ? 6 : Math.max(1, Number(prec)))));
          break;
        case 'x':
        case 'X':
        case 'o':
          if (!isInt(v)) typeErr(`%${conv} format: an integer is required, not ${pyName(v)}`);
          body = Math.abs(v as number).toString(conv === 'o' ? 8 : 16);
          if (conv === 'X') body = body.toUpperCase();
          if ((v as number) < 0) body = `-${body}`;
          break;
        case 'c':
          body = typeof v === 'string' ? v : String.fromCodePoint(nv(v));
          break;
        default:
          body = pyStr(v);
      }
      if (flags.includes('+') && isNum(v) && !body.startsWith('-') && conv !== 's') body = `+${body}`;
      const w = width === undefined || width === '*' ? 0 : Number(width);
      if (body.length < w) {
        if (flags.includes('-')) body = body.padEnd(w);
        else if (flags.includes('0') && isNum(v) && conv !== 's')
          body =
            (body.startsWith('-') ? '-' : '') +
            body.replace(/^-/, '').padStart(w - (body.startsWith('-') ? 1 : 0), '0');
        else body = body.padStart(w);
      }
      return body;
    },
  );
  // Python: leftover arguments fail, except a single list/dict argument (it has __getitem__).
  const single = !isTupleLike(values);
  const tolerant = single && (Array.isArray(values) || isDict(values));
  if (!named && idx < list.length && !tolerant)
    typeErr('not all arguments converted during string formatting');
  return out;
}
const isTupleLike = (v: unknown): boolean => Array.isArray(v) && Object.getOwnPropertySymbols(v).length > 0;

/** Python equality, where a tuple never equals a list. */
function jinjaEquals(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (isTuple(a) !== isTuple(b) || a.length !== b.length) return false;
    return a.every((x, i) => jinjaEquals(x, b[i]));
  }
  if (isDict(a) && isDict(b)) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !jinjaEquals(v, b.get(k))) return false;
    return true;
  }
  return pyEquals(a, b);
}

function compare(op: string, a: unknown, b: unknown): boolean {
  use(a);
  use(b);
  switch (op) {
    case '==':
      return jinjaEquals(a, b);
    case '!=':
      return !jinjaEquals(a, b);
    case 'in':
    case 'notin': {
      let r: boolean;
      if (typeof b === 'string')
        r =
          typeof a === 'string'
            ? b.includes(a)
            : typeErr(`'in <string>' requires string as left operand, not ${pyName(a)}`);
      else if (isDict(b)) r = dictHas(b, a);
      else if (Array.isArray(b) || b instanceof PySet || b instanceof LazySeq)
        r = toArray(b).some((x) => pyEquals(x, a));
      else r = typeErr(`argument of type '${pyName(b)}' is not iterable`);
      return op === 'in' ? r : !r;
    }
    default: {
      const ok =
        (isNum(a) && isNum(b)) ||
        (typeof a === 'string' && typeof b === 'string') ||
        (Array.isArray(a) && Array.isArray(b) && isTuple(a) === isTuple(b));
      if (!ok) typeErr(`'${op}' not supported between instances of '${pyName(a)}' and '${pyName(b)}'`);
      const c = pyCompare(a, b);
      return op === '<' ? c < 0 : op === '>' ? c > 0 : op === '<=' ? c <= 0 : c >= 0;
    }
  }
}

function iterable(v: unknown): unknown[] {
  use(v);
  if (typeof v === 'string') return Array.from(v);
  if (isDict(v)) return [...v.keys()];
  if (Array.isArray(v) || v instanceof PySet || v instanceof LazySeq) return toArray(v);
  return typeErr(`'${pyName(v)}' object is not iterable`);
}

function pyLen(v: unknown): number {
  use(v);
  if (isIter(v)) typeErr("object of type 'generator' has no len()");
  if (typeof v === 'string') return Array.from(v).length;
  if (isDict(v)) return v.size;
  if (Array.isArray(v) || v instanceof PySet) return toArray(v).length;
  return typeErr(`object of type '${pyName(v)}' has no len()`);
}

const truth = (v: unknown): boolean => truthy(use(v));
/** Python str() as Jinja renders it; an iterator prints its type without being iterated. */
export const jinjaStr = (v: unknown): string =>
  v instanceof JUndefined
    ? (use(v), '')
    : v instanceof JObject
      ? v.repr()
      : v instanceof JCallable
        ? `<bound method ${v.name}>`
        : v instanceof LazySeq
          ? `<${v.label}>`
          : pyStr(v);

// ---------------------------------------------------------------------------------------------
// filters and tests

type Filter = (env: Evaluator, value: unknown, args: unknown[], kwargs: Map<string, unknown>) => unknown;
const kwOr = (
  args: unknown[],
  kwargs: Map<string, unknown>,
  i: number,
  name: string,
  dflt: unknown,
): unknown => (i < args.length ? args[i] : kwargs.has(name) ? kwargs.get(name) : dflt);

const sortKey = (v: unknown, caseSensitive: boolean): unknown =>
  !caseSensitive && typeof v === 'string' ? v.toLowerCase() : v;
function attrGetter(env: Evaluator, attribute: unknown): (x: unknown) => unknown {
  if (attribute === null || attribute === undefined) return (x) => x;
  const parts = String(attribute).split('.');
  return (x) => parts.reduce<unknown>((o, p) => (/^\d+$/.test(p) ? getitem(o, Number(p)) : getitem(o, p)), x);
}

function selectOrReject(
  env: Evaluator,
  value: unknown,
  args: unknown[],
  kwargs: Map<string, unknown>,
  select: boolean,
  byAttr: boolean,
): LazySeq {
  return lazy(
    () => selectOrRejectNow(env, value, args, kwargs, select, byAttr),
    'generator object select_or_reject',
  );
}
function selectOrRejectNow(
  env: Evaluator,
  value: unknown,
  args: unknown[],
  kwargs: Map<string, unknown>,
  select: boolean,
  byAttr: boolean,
): unknown[] {
  if (!truth(value)) return [];
  // prepare_select_or_reject runs before the value is iterated
  if (byAttr && args.length < 1) fail('Missing parameter for attribute name', 'FilterArgumentError');
  const items = iterable(value);
  let get = (x: unknown) => x;
  let rest = args;
  if (byAttr) {
    get = attrGetter(env, args[0]);
    rest = args.slice(1);
  }
  const testName = rest[0];
  const testArgs = rest.slice(1);
  return items.filter((x) => {
    const v = get(x);
    const r = testName === undefined ? truth(v) : env.runTest(String(testName), v, testArgs, kwargs);
    return r === select;
  });
}

export const FILTERS: Record<string, Filter> = {
  abs: (_e, v) =>
    v instanceof PyComplex
      ? mkFloat(Math.hypot(v.re, v.im))
      : v instanceof PyBigInt
        ? mkInt(v.value < 0n ? -v.value : v.value)
        : isFloat(v)
          ? mkFloat(Math.abs(nv(use(v))))
          : isNum(v)
            ? Math.abs(nv(v))
            : typeErr(`bad operand type for abs(): '${pyName(v)}'`),
  attr: (_e, v, a, k) => {
    // do_attr: getattr() only, never the item (`{'x': 1} | attr('x')` is undefined)
    if (a.length < 1 && !k.has('name')) typeErr("do_attr() missing 1 required positional argument: 'name'");
    const name = jinjaStr(kwOr(a, k, 0, 'name', ''));
    if (isDict(v) && !/^__.*__$/.test(name) && (name.startsWith('_') || !own(DICT_METHODS, name)))
      return new JUndefined(`'${objRepr(v)}' has no attribute ${pyRepr(name)}`);
    return getattr(v, name);
  },
  batch: (_e, v, a, k) => {
    if (a.length < 1 && !k.has('linecount'))
      typeErr("do_batch() missing 1 required positional argument: 'linecount'");
    return lazy(() => batchNow(v, a), 'generator object do_batch');
  },
  capitalize: (_e, v) => capitalize(jinjaStr(v)),
  center: (_e, v, a) => center(jinjaStr(v), Number(arg(a, 0, 80))),
  count: (_e, v) => pyLen(v),
  length: (_e, v) => pyLen(v),
  default: (_e, v, a, k) => {
    const dflt = kwOr(a, k, 0, 'default_value', '');
    const bool = truthy(kwOr(a, k, 1, 'boolean', false));
    if (v instanceof JUndefined || (bool && !truthy(v))) return dflt;
    return v;
  },
  dictsort: (_e, v, a, k) => {
    use(v);
    // do_dictsort calls value.items() first
    if (!isDict(v)) fail(`'${pyName(v)}' object has no attribute 'items'`, 'AttributeError');
    const cs = truthy(kwOr(a, k, 0, 'case_sensitive', false));
    const by = String(kwOr(a, k, 1, 'by', 'key'));
    const rev = truthy(kwOr(a, k, 2, 'reverse', false));
    const pos =
      by === 'key'
        ? 0
        : by === 'value'
          ? 1
          : fail('You can only sort by either "key" or "value"', 'FilterArgumentError');
    const items = [...(v as Map<unknown, unknown>).entries()].map(([x, y]) => markTuple([x, y]));
    items.sort((p, q) => pyCompare(sortKey(p[pos], cs), sortKey(q[pos], cs)) * (rev ? -1 : 1));
    return items;
  },
  first: (_e, v) => {
    const items = iterable(v);
    return items.length > 0 ? items[0] : new JUndefined('No first item, sequence was empty.');
  },
  last: (_e, v) => {
    if (v instanceof LazySeq) typeErr("'generator' object is not reversible");
    // do_last is next(reversed(value)): only sequences and dicts are reversible
    use(v);
    if (!(typeof v === 'string' || Array.isArray(v) || isDict(v)))
      typeErr(`'${pyName(v)}' object is not reversible`);
    const items = iterable(v);
    return items.length > 0 ? items[items.length - 1] : new JUndefined('No last item, sequence was empty.');
  },
  float: (_e, v, a, k) => {
    use(v);
    const dflt = kwOr(a, k, 0, 'default', mkFloat(0));
    if (isNum(v)) return mkFloat(nv(v));
    if (typeof v === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(v))
      return mkFloat(parseFloat(v));
    return dflt;
  },
  int: (_e, v, a, k) => {
    use(v);
    const dflt = kwOr(a, k, 0, 'default', 0);
    if (v instanceof PyBigInt) return v;
    if (isNum(v)) return Math.trunc(nv(v));
    if (typeof v === 'string') {
      // do_int: int(value, base), then int(float(value)), then the default
      const base = kwOr(a, k, 1, 'base', 10);
      const i = isInt(base) ? pyIntFromString(v, base) : null;
      if (i !== null) return i;
      const t = v.trim();
      const plain = /^[+-]?(\d(_?\d)*\.?(\d(_?\d)*)?|\.\d(_?\d)*)(e[+-]?\d(_?\d)*)?$/i.test(t);
      if (plain) return Math.trunc(parseFloat(t.replace(/_/g, '')));
    }
    return dflt;
  },
  join: (e, v, a, k) => {
    const sep = String(kwOr(a, k, 0, 'd', ''));
    const get = attrGetter(e, kwOr(a, k, 1, 'attribute', null));
    return iterable(v)
      .map((x) => jinjaStr(get(x)))
      .join(sep);
  },
  list: (_e, v) => [...iterable(v)],
  lower: (_e, v) => jinjaStr(v).toLowerCase(),
  upper: (_e, v) => jinjaStr(v).toUpperCase(),
  title: (_e, v) => jinjaTitle(jinjaStr(v)),
  trim: (_e, v, a) => pyStrip(jinjaStr(v), (arg(a, 0, null) as string | null) ?? null, 'both'),
  map: (e, v, a, k) => lazy(() => mapFilter(e, v, a, k), 'generator object sync_do_map'),
  max: (e, v, a, k) => minMax(e, v, a, k, 1),
  min: (e, v, a, k) => minMax(e, v, a, k, -1),
  select: (e, v, a, k) => selectOrReject(e, v, a, k, true, false),
  reject: (e, v, a, k) => selectOrReject(e, v, a, k, false, false),
  selectattr: (e, v, a, k) => selectOrReject(e, v, a, k, true, true),
  rejectattr: (e, v, a, k) => selectOrReject(e, v, a, k, false, true),
  replace: (_e, v, a, k) => {
    const missing = ['old', 'new'].filter((n, i) => a.length <= i && !k.has(n));
    if (missing.length > 0) {
      typeErr(
        `do_replace() missing ${missing.length} required positional argument${missing.length > 1 ? 's' : ''}: ${missing.map((n) => `'${n}'`).join(' and ')}`,
      );
    }
    return STR_METHODS.replace!(
      jinjaStr(v),
      a.slice(0, 2).concat(a.length > 2 && a[2] !== null ? [a[2]] : []),
      new Map(),
    );
  },
  reverse: (_e, v) => {
    use(v);
    if (typeof v === 'string') return Array.from(v).reverse().join('');
    if (Array.isArray(v)) return lazy(() => [...v].reverse(), 'list_reverseiterator object');
    // do_reverse: reversed(value), else list(value) reversed, else a FilterArgumentError
    if (!(isDict(v) || v instanceof PySet || v instanceof LazySeq))
      fail('argument must be iterable', 'FilterArgumentError');
    return [...iterable(v)].reverse();
  },
  round: (_e, v, a, k) => {
    use(v);
    if (!isNum(v)) typeErr(`type ${pyName(v)} doesn't define __round__ method`);
    const precision = Number(kwOr(a, k, 0, 'precision', 0));
    const method = String(kwOr(a, k, 1, 'method', 'common'));
    if (method === 'common') {
      const r = pyRound(nv(v), precision);
      return isFloat(v) ? mkFloat(r) : r;
    }
    const f = 10 ** precision;
    if (method === 'ceil') return mkFloat(Math.ceil(nv(v) * f) / f);
    if (method === 'floor') return mkFloat(Math.floor(nv(v) * f) / f);
    return fail('method must be common, ceil or floor', 'FilterArgumentError');
  },
  sort: (e, v, a, k) => {
    const rev = truthy(kwOr(a, k, 0, 'reverse', false));
    const cs = truthy(kwOr(a, k, 1, 'case_sensitive', false));
    const get = attrGetter(e, kwOr(a, k, 2, 'attribute', null));
    const items = [...iterable(v)].map((x, i) => ({ x, i, key: sortKey(get(x), cs) }));
    items.sort((p, q) => {
      const c = compare('<', p.key, q.key) ? -1 : compare('<', q.key, p.key) ? 1 : 0;
      return (rev ? -c : c) || p.i - q.i;
    });
    return items.map((p) => p.x);
  },
  string: (_e, v) => jinjaStr(v),
  sum: (e, v, a, k) => {
    const get = attrGetter(e, kwOr(a, k, 0, 'attribute', null));
    let acc = kwOr(a, k, 1, 'start', 0);
    for (const x of iterable(v)) acc = binop('+', acc, get(x));
    return acc;
  },
  truncate: (_e, v, a, k) => {
    if (typeof v !== 'string' && !isUndef(v)) {
      // do_truncate measures len(s) first: short sequences come back unchanged, None/numbers raise
      const n = pyLen(v);
      if (n <= Number(kwOr(a, k, 0, 'length', 255)) + Number(kwOr(a, k, 3, 'leeway', 5))) return v;
    }
    const s = jinjaStr(v);
    const length = Number(kwOr(a, k, 0, 'length', 255));
    const killwords = truthy(kwOr(a, k, 1, 'killwords', false));
    const end = String(kwOr(a, k, 2, 'end', '...'));
    const leeway = Number(kwOr(a, k, 3, 'leeway', 5));
    if (s.length <= length + leeway) return s;
    if (killwords) return s.slice(0, length - end.length) + end;
    const cut = s.slice(0, length - end.length);
    const sp = cut.lastIndexOf(' ');
    return (sp >= 0 ? cut.slice(0, sp) : cut) + end;
  },
  unique: (e, v, a, k) => {
    const cs = truthy(kwOr(a, k, 0, 'case_sensitive', false));
    const get = attrGetter(e, kwOr(a, k, 1, 'attribute', null));
    return lazy(() => {
      const seen = new PySet();
      return iterable(v).filter((x) => {
        const key = sortKey(get(x), cs);
        if (Array.isArray(key) && !isTupleLike(key)) typeErr("unhashable type: 'list'");
        if (isDict(key)) typeErr("unhashable type: 'dict'");
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }, 'generator object do_unique');
  },
  wordcount: (_e, v) => (jinjaStr(v).match(/\w+/gu) ?? []).length,
  tojson: (_e, v, a, k) => {
    use(v);
    const indent = kwOr(a, k, 0, 'indent', null);
    return pyJsonDumps(v, indent === null ? null : Number(indent), 0, true)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/'/g, '\\u0027');
  },
  format: (_e, v, a, k) => printf(jinjaStr(v), k.size > 0 ? new Map([...k]) : markTuple([...a])),
  items: (_e, v) =>
    lazy(() => {
      if (v instanceof JUndefined) return [];
      if (!isDict(v)) typeErr('Can only get item pairs from a mapping.');
      return [...(v as Map<unknown, unknown>).entries()].map(([x, y]) => markTuple([x, y]));
    }, 'generator object do_items'),
  groupby: (e, v, a, k) => {
    if (a.length < 1 && !k.has('attribute'))
      typeErr("sync_do_groupby() missing 1 required positional argument: 'attribute'");
    const get = attrGetter(e, kwOr(a, k, 0, 'attribute', null));
    const groups = new Map<string, [unknown, unknown[]]>();
    const items = iterable(v).map((x) => ({ x, key: get(x) }));
    items.sort((p, q) => pyCompare(use(p.key), use(q.key)));
    for (const { x, key } of items) {
      const h = JSON.stringify(pyRepr(key));
      const g = groups.get(h);
      if (g) g[1].push(x);
      else groups.set(h, [key, [x]]);
    }
    return [...groups.values()].map(
      ([grouper, list]) =>
        new Map<unknown, unknown>([
          ['grouper', grouper],
          ['list', list],
        ]),
    );
  },
  indent: (_e, v, a, k) => {
    // do_indent starts with `s += "\n"`: a list extends and then lacks splitlines, others refuse +=
    if (Array.isArray(v) && !isIter(v)) fail("'list' object has no attribute 'splitlines'", 'AttributeError');
    if (typeof v !== 'string' && !isUndef(v))
      typeErr(`unsupported operand type(s) for +=: '${pyName(v)}' and 'str'`);
    const width = kwOr(a, k, 0, 'width', 4);
    const first = truthy(kwOr(a, k, 1, 'first', false));
    const blank = truthy(kwOr(a, k, 2, 'blank', false));
    const ind = typeof width === 'string' ? width : ' '.repeat(Number(width));
    const lines = STR_METHODS.splitlines!(`${jinjaStr(v)}\n`, [], new Map()) as string[];
    let rv: string;
    if (blank) rv = lines.join(`\n${ind}`);
    else {
      rv = lines[0] ?? '';
      if (lines.length > 1)
        rv += `\n${lines
          .slice(1)
          .map((l) => (l ? ind + l : l))
          .join('\n')}`;
    }
    return first ? ind + rv : rv;
  },
  slice: (_e, v, a, k) => {
    if (a.length < 1 && !k.has('slices'))
      typeErr("sync_do_slice() missing 1 required positional argument: 'slices'");
    return lazy(() => sliceNow(v, a, k), 'generator object sync_do_slice');
  },
  filesizeformat: (_e, v, a, k) => {
    const bytes = pyFloatOf(v); // float(value): no default, unlike the float filter
    const binary = truthy(kwOr(a, k, 0, 'binary', false));
    const base = binary ? 1024 : 1000;
    const prefixes = binary
      ? ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB']
      : ['kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
    if (bytes === 1) return '1 Byte';
    if (bytes < base) return `${Math.trunc(bytes)} Bytes`;
    let unit = base;
    let prefix = prefixes[0]!;
    for (let i = 0; i < prefixes.length; i++) {
      unit = base ** (i + 2);
      prefix = prefixes[i]!;
      if (bytes < unit) break;
    }
    return `${((base * bytes) / unit).toFixed(1)} ${prefix}`;
  },
  urlencode: (_e, v) => {
    use(v);
    const quote = (x: unknown, forQs: boolean) =>
      encodeURIComponent(jinjaStr(x))
        .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
        .replace(/%2F/g, forQs ? '%2F' : '/')
        .replace(/%20/g, forQs ? '+' : '%20');
    if (typeof v === 'string' || !(isDict(v) || Array.isArray(v))) return quote(v, false);
    const items = isDict(v)
      ? [...v.entries()]
      : (v as unknown[]).map((p) => {
          // `for k, v in value`: a non-iterable item cannot be unpacked
          if (!(
            typeof p === 'string' ||
            Array.isArray(p) ||
            isDict(p) ||
            p instanceof PySet ||
            p instanceof LazySeq
          ))
            typeErr(`cannot unpack non-iterable ${pyName(p)} object`);
          const pair = iterable(p);
          if (pair.length !== 2)
            fail(
              pair.length > 2
                ? 'too many values to unpack (expected 2)'
                : `not enough values to unpack (expected 2, got ${pair.length})`,
              'ValueError',
            );
          return pair as [unknown, unknown];
        });
    return items.map(([x, y]) => `${quote(x, true)}=${quote(y, true)}`).join('&');
  },
  striptags: (_e, v) =>
    jinjaStr(v)
      .replace(/<!--[\s\S]*?-->/g, '')
      .replace(/<[^>]*>/g, '')
      .replace(/\s+/g, ' ')
      .trim()
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;|&#34;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&'),
  safe: (_e, v) => (isUndef(v) ? use(v) : jinjaStr(v)), // Markup(value): a str
  forceescape: (_e, v) => htmlEscape(jinjaStr(v)),
  pprint: (_e, v) => pformat(useValue(v)),
  random: (e, v) => {
    use(v);
    const n = pyLen(v);
    if (n === 0) return new JUndefined('No random item, sequence was empty.');
    const i = Math.floor(e.random() * n);
    if (isDict(v)) {
      if (!v.has(i)) fail(String(i), 'KeyError');
      return v.get(i);
    }
    return typeof v === 'string' ? Array.from(v)[i] : toArray(v)[i];
  },
  urlize: (_e, v, a, k) => {
    const limit = kwOr(a, k, 0, 'trim_url_limit', null);
    const nofollow = truthy(kwOr(a, k, 1, 'nofollow', false));
    const target = kwOr(a, k, 2, 'target', null);
    const rel = kwOr(a, k, 3, 'rel', null);
    const extra = kwOr(a, k, 4, 'extra_schemes', null);
    const relParts = new Set(
      `${rel === null ? '' : jinjaStr(rel)} noopener${nofollow ? ' nofollow' : ''}`
        .split(/\s+/)
        .filter((x) => x),
    );
    return urlize(jinjaStr(v), {
      trimUrlLimit:
        limit === null
          ? null
          : isInt(limit)
            ? limit
            : typeErr(`'>' not supported between instances of 'int' and '${pyName(limit)}'`),
      rel: [...relParts].sort().join(' ') || null,
      target: target === null ? null : jinjaStr(target),
      extraSchemes: extra === null ? [] : iterable(extra).map((x) => jinjaStr(x)),
    });
  },
  wordwrap: (_e, v, a, k) => {
    use(v);
    if (typeof v !== 'string') typeErr(`'${pyName(v)}' object has no attribute 'splitlines'`);
    const width = kwOr(a, k, 0, 'width', 79);
    if (!isInt(width)) typeErr(`'<=' not supported between instances of '${pyName(width)}' and 'int'`);
    const wrapstring = kwOr(a, k, 2, 'wrapstring', null);
    return wordwrap(
      v,
      width,
      truthy(kwOr(a, k, 1, 'break_long_words', true)),
      wrapstring === null ? '\n' : jinjaStr(wrapstring),
      truthy(kwOr(a, k, 3, 'break_on_hyphens', true)),
    );
  },
  xmlattr: (_e, v, a, k) => {
    use(v);
    if (!isDict(v)) typeErr(`'${pyName(v)}' object has no attribute 'items'`);
    const items: string[] = [];
    for (const [key, value] of v) {
      if (value === null || value instanceof JUndefined) continue;
      if (typeof key !== 'string') typeErr('expected string or bytes-like object');
      if (/[\s/>=]/.test(key)) fail(`Invalid character in attribute name: ${pyRepr(key)}`, 'ValueError');
      items.push(`${htmlEscape(key)}="${htmlEscape(jinjaStr(value))}"`);
    }
    const rv = items.join(' ');
    return truthy(kwOr(a, k, 0, 'autospace', true)) && rv ? ` ${rv}` : rv;
  },
  e: (_e, v) => htmlEscape(jinjaStr(v)),
  escape: (_e, v) => htmlEscape(jinjaStr(v)),
  regex_replace: (_e, v, a) => jinjaStr(v).replace(compilePyRegex(String(a[0]), 'g'), String(a[1] ?? '')),
};
/** Python's dict(iterable_or_mapping, **kwargs). */
function pyDict(args: unknown[], kwargs: Map<string, unknown>): Map<unknown, unknown> {
  if (args.length > 1) typeErr(`dict expected at most 1 argument, got ${args.length}`);
  const m = new Map<unknown, unknown>();
  if (args.length === 1) {
    const src = useValue(args[0]);
    if (isDict(src)) for (const [key, v] of src) m.set(key, v);
    else {
      iterable(src).forEach((item, i) => {
        if (typeof item !== 'string' && !Array.isArray(item) && !isDict(item))
          typeErr(`cannot convert dictionary update sequence element #${i} to a sequence`);
        const pair = iterable(item);
        if (pair.length !== 2)
          fail(
            `dictionary update sequence element #${i} has length ${pair.length}; 2 is required`,
            'ValueError',
          );
        const key = use(pair[0]);
        if (isDict(key) || (Array.isArray(key) && !isTupleLike(key)))
          typeErr(`unhashable type: '${pyName(key)}'`);
        m.set(dictKey(key), pair[1]);
      });
    }
  }
  for (const [key, v] of kwargs) m.set(key, useValue(v));
  return m;
}

function htmlEscape(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&#34;')
    .replace(/'/g, '&#39;');
}

function batchNow(v: unknown, a: unknown[]): unknown[] {
  const items = iterable(v);
  const n = Number(a[0]);
  const out: unknown[][] = [];
  for (let i = 0; i < items.length; i += n) {
    const chunk = items.slice(i, i + n);
    if (a.length > 1 && chunk.length < n) while (chunk.length < n) chunk.push(a[1]);
    out.push(chunk);
  }
  return out;
}

function sliceNow(v: unknown, a: unknown[], k: Map<string, unknown>): unknown[] {
  const seq = iterable(v);
  const slices = Number(kwOr(a, k, 0, 'slices', 1));
  const fill = kwOr(a, k, 1, 'fill_with', null);
  const per = Math.floor(seq.length / slices);
  const extra = seq.length % slices;
  const out: unknown[][] = [];
  let offset = 0;
  for (let n = 0; n < slices; n++) {
    const start = offset + n * per;
    if (n < extra) offset++;
    const end = offset + (n + 1) * per;
    const part = seq.slice(start, end);
    if (fill !== null && n >= extra) part.push(fill);
    out.push(part);
  }
  return out;
}

function mapFilter(e: Evaluator, v: unknown, a: unknown[], k: Map<string, unknown>): unknown[] {
  if (!truth(v)) return [];
  // prepare_map runs before the value is iterated
  if (!k.has('attribute') && a.length === 0) fail('map requires a filter argument', 'FilterArgumentError');
  const items = iterable(v);
  if (k.has('attribute')) {
    const get = attrGetter(e, k.get('attribute'));
    const hasDefault = k.has('default');
    return items.map((x) => {
      const r = get(x);
      return hasDefault && r instanceof JUndefined ? k.get('default') : r;
    });
  }
  if (a.length === 0) fail('map requires a filter argument', 'FilterArgumentError');
  const name = String(a[0]);
  return items.map((x) => e.runFilter(name, x, a.slice(1), new Map()));
}

function minMax(e: Evaluator, v: unknown, a: unknown[], k: Map<string, unknown>, sign: 1 | -1): unknown {
  const cs = truthy(kwOr(a, k, 0, 'case_sensitive', false));
  const get = attrGetter(e, kwOr(a, k, 1, 'attribute', null));
  const items = iterable(v);
  if (items.length === 0) return new JUndefined(`No aggregated item, sequence was empty.`);
  let best = items[0];
  for (const x of items.slice(1)) {
    // Python's max() asks `item > best`, min() `item < best`
    if (sign * pyCompare(sortKey(get(x), cs), sortKey(get(best), cs), false, sign === 1 ? '>' : '<') > 0)
      best = x;
  }
  return best;
}

type Test = (value: unknown, args: unknown[]) => boolean;
/** Jinja's tests; type and identity tests look at an undefined value without failing, as Jinja2's do. */
const isUndef = (v: unknown) => v instanceof JUndefined;
/** Jinja2 registers operator.eq & co. as tests: exactly one argument besides the value. */
function operatorTest(op: string, name: string, v: unknown, a: unknown[]): boolean {
  if (a.length !== 1) typeErr(`${name} expected 2 arguments, got ${a.length + 1}`);
  return compare(op, v, a[0]);
}

export const TESTS: Record<string, Test> = {
  defined: (v) => !isUndef(v),
  undefined: (v) => isUndef(v),
  none: (v) => v === null,
  number: (v) => !isUndef(v) && (isNum(v) || v instanceof PyComplex),
  string: (v) => typeof v === 'string',
  mapping: (v) => isDict(v),
  sequence: (v) => typeof v === 'string' || (Array.isArray(v) && !isIter(v)) || isDict(v),
  iterable: (v) =>
    typeof use(v) === 'string' || Array.isArray(v) || isDict(v) || v instanceof PySet || v instanceof LazySeq,
  callable: (v) => v instanceof JCallable || isUndef(v),
  odd: (v) => pyEquals(binop('%', v, 2), 1),
  even: (v) => pyEquals(binop('%', v, 2), 0),
  divisibleby: (v, a) => pyEquals(binop('%', v, a[0]), 0),
  eq: (v, a) => operatorTest('==', 'eq', v, a),
  equalto: (v, a) => operatorTest('==', 'eq', v, a),
  '==': (v, a) => operatorTest('==', 'eq', v, a),
  ne: (v, a) => operatorTest('!=', 'ne', v, a),
  '!=': (v, a) => operatorTest('!=', 'ne', v, a),
  lt: (v, a) => operatorTest('<', 'lt', v, a),
  lessthan: (v, a) => operatorTest('<', 'lt', v, a),
  '<': (v, a) => operatorTest('<', 'lt', v, a),
  gt: (v, a) => operatorTest('>', 'gt', v, a),
  greaterthan: (v, a) => operatorTest('>', 'gt', v, a),
  '>': (v, a) => operatorTest('>', 'gt', v, a),
  le: (v, a) => operatorTest('<=', 'le', v, a),
  '<=': (v, a) => operatorTest('<=', 'le', v, a),
  ge: (v, a) => operatorTest('>=', 'ge', v, a),
  '>=': (v, a) => operatorTest('>=', 'ge', v, a),
  in: (v, a) => compare('in', v, a[0]),
  lower: (v) => STR_METHODS.islower!(jinjaStr(v), [], new Map()) === true,
  upper: (v) => STR_METHODS.isupper!(jinjaStr(v), [], new Map()) === true,
  true: (v) => v === true,
  false: (v) => v === false,
  boolean: (v) => typeof v === 'boolean',
  integer: (v) => isInt(v),
  float: (v) => isFloat(v),
  sameas: (v, a) => (v === null || typeof v !== 'object' ? v === a[0] : v === a[0]),
  escaped: () => false,
  filter: (v, a) =>
    registered(v, a, 'filter') &&
    (own(FILTERS, v as string) !== undefined ||
      v === 'd' ||
      Object.prototype.hasOwnProperty.call(mistralFunctions, v as string)),
  test: (v, a) => registered(v, a, 'test') && own(TESTS, v as string) !== undefined,
};

/** `name in env.filters` / `env.tests`: any hashable value may be asked, only a str can be there. */
function registered(v: unknown, args: unknown[], name: string): boolean {
  if (args.length > 0)
    typeErr(`test_${name}() takes 2 positional arguments but ${args.length + 2} were given`);
  use(v);
  if (isDict(v) || (Array.isArray(v) && !isTupleLike(v)) || v instanceof PySet)
    typeErr(`unhashable type: '${pyName(v)}'`);
  return typeof v === 'string';
}

const MISTRAL_REQUIRED: Record<string, number> = {
  json_dump: 1,
  json_parse: 1,
  yaml_dump: 1,
  yaml_parse: 1,
  global: 1,
};
/** Python parameter names of Mistral's functions (after the context), for keyword arguments. */
const MISTRAL_PARAMS: Record<string, string[]> = {
  env: [],
  execution: [],
  uuid: [],
  task: ['task_name'],
  tasks: ['workflow_execution_id', 'recursive', 'state', 'flat'],
  executions: ['id', 'root_execution_id', 'state', 'from_time', 'to_time'],
  global: ['var_name'],
  json_pp: ['data'],
  json_dump: ['data'],
  json_parse: ['data'],
  yaml_dump: ['data'],
  yaml_parse: ['data'],
};

function bindMistralArgs(name: string, args: unknown[], kwargs: Map<string, unknown>): unknown[] {
  const params = own(MISTRAL_PARAMS, name) ?? [];
  if (args.length > params.length) {
    const given = args.length + 1;
    // uuid_(context=None) may also be called without the context
    const takes =
      name === 'uuid'
        ? 'from 0 to 1 positional arguments'
        : params.length === 0
          ? '1 positional argument'
          : `from 1 to ${params.length + 1} positional arguments`;
    typeErr(`${name}_() takes ${takes} but ${given} were given`);
  }
  const out = [...args];
  for (const [k, v] of kwargs) {
    const i = params.indexOf(k);
    if (i < 0) typeErr(`${name}() got an unexpected keyword argument '${k}'`);
    if (i < out.length && out[i] !== undefined) typeErr(`${name}() got multiple values for argument '${k}'`);
    while (out.length < i) out.push(undefined);
    out[i] = v;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// evaluation

export class Evaluator {
  private readonly root: Frame;
  private steps = 0;
  constructor(readonly env: JEnv) {
    this.root = new Frame(null);
    this.root.vars.set('_', env.data);
    for (const k of ['__env', '__execution', '__task_execution']) {
      this.root.vars.set(k, isDict(env.data) && env.data.has(k) ? env.data.get(k) : null);
    }
  }

  private mistral(name: keyof typeof mistralFunctions, ctx: unknown, args: unknown[]): unknown {
    const fn = mistralFunctions[name] as (c: MistralCall, ...a: unknown[]) => unknown;
    if (args.length < (own(MISTRAL_REQUIRED, name) ?? 0))
      typeErr(
        `${name}_() missing 1 required positional argument: '${own(MISTRAL_PARAMS, name)?.[0] ?? 'data'}'`,
      );
    return fn({ host: this.env.host, ctx, language: 'jinja' }, ...args);
  }

  private global(name: string): unknown {
    if (Object.prototype.hasOwnProperty.call(mistralFunctions, name)) {
      return new JCallable(name, (a, k) =>
        this.mistral(
          name as keyof typeof mistralFunctions,
          this.env.data,
          bindMistralArgs(name, a, k).map((x) => (x === undefined ? undefined : useValue(x))),
        ),
      );
    }
    if (name === 'range') {
      return new JCallable('range', (a) => {
        const ints = a.map((x) =>
          isInt(use(x))
            ? (x as number)
            : typeErr(`'${pyName(x)}' object cannot be interpreted as an integer`),
        );
        const [start, stop, step] = ints.length === 1 ? [0, ints[0]!, 1] : [ints[0]!, ints[1]!, ints[2] ?? 1];
        if (step === 0) fail('range() arg 3 must not be zero', 'ValueError');
        const len = Math.max(0, Math.ceil((stop - start) / step));
        if (len > 100000)
          fail('Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).', 'OverflowError');
        return Array.from({ length: len }, (_x, i) => start + i * step);
      });
    }
    if (name === 'dict') return new JCallable('dict', (a, k) => pyDict(a, k));
    if (name === 'cycler') {
      return new JCallable('cycler', (a) => {
        const items = a.map(useValue);
        if (items.length === 0) fail('at least one item has to be provided', 'RuntimeError');
        let pos = 0;
        const current = () =>
          items.length === 0 ? fail('tuple index out of range', 'IndexError') : items[pos];
        return new JObject(
          'Cycler',
          (attr) => {
            if (attr === 'items') return markTuple([...items]);
            if (attr === 'pos') return pos;
            if (attr === 'current') return current();
            if (attr === 'reset') return new JCallable('reset', () => ((pos = 0), null));
            if (attr === 'next') {
              return new JCallable('next', () => {
                const rv = current();
                pos = (pos + 1) % items.length;
                return rv;
              });
            }
            return undefined;
          },
          () => '<jinja2.utils.Cycler object>',
        );
      });
    }
    if (name === 'joiner') {
      return new JCallable('joiner', (a, k) => {
        const sep = useValue(kwOr(a, k, 0, 'sep', ', '));
        let used = false;
        return new JCallable('joiner', () => {
          if (used) return sep;
          used = true;
          return '';
        });
      });
    }
    if (name === 'namespace') {
      return new JCallable('namespace', (a, k) => {
        const attrs = pyDict(a, k);
        return new JObject(
          'Namespace',
          (attr) => (attrs.has(attr) ? attrs.get(attr) : undefined),
          () => `<Namespace ${pyRepr(attrs)}>`,
        );
      });
    }
    if (name === 'lipsum') {
      return new JCallable('lipsum', (a, k) => {
        const int = (i: number, key: string, dflt: number): number => {
          const v = useValue(kwOr(a, k, i, key, dflt));
          return isInt(v) ? v : typeErr(`'${pyName(v)}' object cannot be interpreted as an integer`);
        };
        return lipsum(
          int(0, 'n', 5),
          truthy(useValue(kwOr(a, k, 1, 'html', true))),
          int(2, 'min', 20),
          int(3, 'max', 100),
          () => this.random(),
        );
      });
    }
    return MISSING;
  }

  /** A float in [0, 1) from the host (Math.random without one). */
  random(): number {
    return this.env.host.random ? this.env.host.random() : Math.random();
  }

  runFilter(name: string, value: unknown, args: unknown[], kwargs: Map<string, unknown>): unknown {
    const f = own(FILTERS, name === 'd' ? 'default' : name);
    if (f) return f(this, value, args, kwargs);
    if (Object.prototype.hasOwnProperty.call(mistralFunctions, name)) {
      return this.mistral(
        name as keyof typeof mistralFunctions,
        useValue(value),
        bindMistralArgs(name, args, kwargs).map((x) => (x === undefined ? undefined : useValue(x))),
      );
    }
    return fail(`No filter named '${name}'.`, 'TemplateAssertionError');
  }

  runTest(name: string, value: unknown, args: unknown[], _kwargs: Map<string, unknown>): boolean {
    const t = own(TESTS, name);
    if (!t) return fail(`No test named '${name}'.`, 'TemplateAssertionError');
    return t(value, args.map(useValue));
  }

  tick(): void {
    if (++this.steps > 10_000_000) fail('Template evaluation exceeded its step budget', 'RuntimeError');
  }

  eval(n: JNode, f: Frame): unknown {
    this.tick();
    switch (n.type) {
      case 'const':
        return n.value;
      case 'name': {
        const v = f.lookup(n.name);
        if (v !== MISSING) return v;
        const g = this.global(n.name);
        return g !== MISSING ? g : new JUndefined(`'${n.name}' is undefined`);
      }
      case 'tuple':
        return markTuple(n.items.map((x) => useValue(this.eval(x, f))));
      case 'list':
        return n.items.map((x) => useValue(this.eval(x, f)));
      case 'dict': {
        const m = new Map<unknown, unknown>();
        for (const [k, v] of n.items) {
          const key = use(this.eval(k, f));
          if (isDict(key) || (Array.isArray(key) && !isTupleLike(key)))
            typeErr(`unhashable type: '${pyName(key)}'`);
          m.set(dictKey(key), useValue(this.eval(v, f)));
        }
        return m;
      }
      case 'getattr':
        return getattr(this.eval(n.obj, f), n.name);
      case 'getitem':
        return getitem(this.eval(n.obj, f), this.eval(n.key, f));
      case 'slice': {
        const part = (x: JNode | null) => (x === null ? null : use(this.eval(x, f)));
        return sliceOf(this.eval(n.obj, f), part(n.start), part(n.stop), part(n.step));
      }
      case 'call': {
        const fn = use(this.eval(n.fn, f));
        const args = n.args.map((x) => this.eval(x, f));
        const kwargs = new Map(n.kwargs.map(([k, x]) => [k, this.eval(x, f)]));
        if (!(fn instanceof JCallable)) return typeErr(`'${pyName(fn)}' object is not callable`);
        return fn.fn(args, kwargs);
      }
      case 'filter': {
        const value = this.eval(n.value, f);
        const args = n.args.map((x) => useValue(this.eval(x, f)));
        const kwargs = new Map(n.kwargs.map(([k, x]) => [k, useValue(this.eval(x, f))]));
        return this.runFilter(n.name, value, args, kwargs);
      }
      case 'test': {
        const value = this.eval(n.value, f);
        const args = n.args.map((x) => this.eval(x, f));
        const kwargs = new Map(n.kwargs.map(([k, x]) => [k, this.eval(x, f)]));
        const r = this.runTest(n.name, value, args, kwargs);
        return n.negate ? !r : r;
      }
      case 'binop':
        return binop(n.op, this.eval(n.left, f), this.eval(n.right, f));
      case 'unop': {
        const v = use(this.eval(n.operand, f));
        if (n.op === 'not') return !truthy(v);
        if (v instanceof PyComplex) return n.op === '+' ? v : new PyComplex(-v.re, -v.im);
        if (!isNum(v)) typeErr(`bad operand type for unary ${n.op}: '${pyName(v)}'`);
        if (n.op === '+') return typeof v === 'boolean' ? nv(v) : v;
        if (v instanceof PyBigInt) return mkInt(-v.value);
        return isFloat(v) ? mkFloat(-nv(v)) : -nv(v) || 0;
      }
      case 'compare': {
        let left = this.eval(n.first, f);
        for (const [op, node] of n.ops) {
          const right = this.eval(node, f);
          if (!compare(op, left, right)) return false;
          left = right;
        }
        return true;
      }
      case 'and': {
        const l = this.eval(n.left, f);
        return truth(l) ? this.eval(n.right, f) : l;
      }
      case 'or': {
        const l = this.eval(n.left, f);
        return truth(l) ? l : this.eval(n.right, f);
      }
      case 'concat':
        return n.items.map((x) => jinjaStr(this.eval(x, f))).join('');
      case 'cond':
        if (truth(this.eval(n.test, f))) return this.eval(n.then, f);
        return n.else
          ? this.eval(n.else, f)
          : new JUndefined(
              'the inline if-expression evaluated to false and no else section was defined.',
              false,
            );
    }
  }

  evaluateExpression(n: JNode): unknown {
    return this.eval(n, new Frame(this.root));
  }

  render(body: Stmt[]): string {
    const out: string[] = [];
    this.renderInto(body, new Frame(this.root), out);
    return out.join('');
  }

  private assign(f: Frame, target: string[], value: unknown): void {
    if (target.length === 1) {
      f.vars.set(target[0]!, value);
      return;
    }
    const items = iterable(value);
    if (items.length !== target.length)
      fail(`too many values to unpack (expected ${target.length})`, 'ValueError');
    target.forEach((t, i) => f.vars.set(t, items[i]));
  }

  private renderInto(body: Stmt[], f: Frame, out: string[]): void {
    for (const s of body) {
      this.tick();
      switch (s.type) {
        case 'text':
          out.push(s.text);
          break;
        case 'output':
          out.push(jinjaStr(this.eval(s.expr, f)));
          break;
        case 'if': {
          const branch = s.branches.find(([c]) => truth(this.eval(c, f)));
          this.renderInto(branch ? branch[1] : s.else, f, out);
          break;
        }
        case 'set':
          this.assign(f, s.target, useValue(this.eval(s.value, f)));
          break;
        case 'for': {
          let items = iterable(this.eval(s.iter, f));
          if (s.filter) {
            const filter = s.filter;
            items = items.filter((x) => {
              const probe = new Frame(f);
              this.assign(probe, s.target, x);
              return truth(this.eval(filter, probe));
            });
          }
          if (items.length === 0) {
            this.renderInto(s.else, f, out);
            break;
          }
          items.forEach((x, i) => {
            const inner = new Frame(f);
            const loop = new Map<unknown, unknown>([
              ['index', i + 1],
              ['index0', i],
              ['revindex', items.length - i],
              ['revindex0', items.length - i - 1],
              ['first', i === 0],
              ['last', i === items.length - 1],
              ['length', items.length],
              ['depth', 1],
              ['depth0', 0],
              ['previtem', i > 0 ? items[i - 1] : new JUndefined('there is no previous item')],
              ['nextitem', i < items.length - 1 ? items[i + 1] : new JUndefined('there is no next item')],
              [
                'cycle',
                new JCallable('cycle', (a) =>
                  a.length === 0 ? typeErr('no items for cycling given') : a[i % a.length],
                ),
              ],
            ]);
            inner.vars.set('loop', loop);
            this.assign(inner, s.target, x);
            this.renderInto(s.body, inner, out);
          });
          break;
        }
      }
    }
  }
}
