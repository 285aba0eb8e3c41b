import { fail } from './errors';

/**
 * The value model shared by the YAQL and Jinja evaluators. It mirrors the Python data model the
 * reference implementations run on:
 * - `null`, booleans and strings are JS primitives;
 * - integers are integral JS numbers; floats are non-integral JS numbers, or a {@link PyFloat} box when
 *   the value happens to be integral (`2.0` must stay a float: Python renders it `2.0`);
 * - lists (and tuples) are JS arrays;
 * - dicts are JS `Map`s (insertion-ordered, any primitive key, no prototype to pollute);
 * - sets are {@link PySet}s; lazy sequences are {@link LazySeq}s.
 * Host data enters through {@link fromHost} and leaves through {@link toHost}.
 */
export class PyFloat {
  constructor(readonly value: number) {}
}

/**
 * A Python int beyond JS's exact range (|n| > 2^53 - 1), as integer arithmetic in yaql makes them
 * (`pow(2, 64)`): exact in arithmetic, comparison and text; a JSON number (a double) on output.
 * Integers within the range are always plain numbers ({@link mkInt}).
 */
export class PyBigInt {
  constructor(readonly value: bigint) {}
}
/** An exact integer as the value model holds it: a number when safe, a {@link PyBigInt} otherwise. */
export const mkInt = (b: bigint): number | PyBigInt =>
  b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : new PyBigInt(b);
/** The exact value of an integer (a number, a bool or a {@link PyBigInt}). */
export const bigOf = (v: unknown): bigint =>
  v instanceof PyBigInt ? v.value : BigInt(typeof v === 'boolean' ? Number(v) : (v as number));

/**
 * A Python complex number. Only Python's float power makes one (a negative finite base raised to a
 * finite non-integral exponent: `pow(-8, 0.5)`, Jinja's `(-8) ** 0.5`); it prints as Python's repr
 * and cannot be stored (json.dumps refuses it).
 */
export class PyComplex {
  constructor(
    readonly re: number,
    readonly im: number,
  ) {}
}

/** An insertion-ordered set with Python equality (1 and 1.0 are one element). */
export class PySet {
  readonly items = new Map<string, unknown>();
  constructor(values?: Iterable<unknown>) {
    if (values) for (const v of values) this.add(v);
  }
  add(v: unknown): void {
    const k = hashKey(v);
    if (!this.items.has(k)) this.items.set(k, v);
  }
  has(v: unknown): boolean {
    return this.items.has(hashKey(v));
  }
  get size(): number {
    return this.items.size;
  }
  values(): unknown[] {
    return [...this.items.values()];
  }
}

/** A point in time with a UTC offset (Python's aware datetime), microsecond precision. */
export class PyDateTime {
  /** `utcMicros`: microseconds since 1970-01-01T00:00:00Z; `offsetMicros`: the zone's UTC offset. */
  constructor(
    readonly utcMicros: number,
    readonly offsetMicros = 0,
  ) {}
  /** Wall-clock fields in the datetime's own zone. */
  fields(): {
    year: number;
    month: number;
    day: number;
    hour: number;
    minute: number;
    second: number;
    microsecond: number;
    weekday: number;
  } {
    const local = this.utcMicros + this.offsetMicros;
    const ms = Math.floor(local / 1000);
    const d = new Date(ms);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
      microsecond: ((local % 1_000_000) + 1_000_000) % 1_000_000,
      weekday: (d.getUTCDay() + 6) % 7,
    };
  }
}

/**
 * A calendar date (Python's datetime.date), as yaml_parse makes from `2001-12-14`. It prints as
 * `2001-12-14`, but Mistral cannot store it: a result holding one fails, as json.dumps fails.
 */
export class PyDate {
  constructor(
    readonly year: number,
    readonly month: number,
    readonly day: number,
  ) {}
  toString(): string {
    return `${String(this.year).padStart(4, '0')}-${pad2(this.month)}-${pad2(this.day)}`;
  }
}

/** A duration (Python's timedelta) in microseconds. */
export class PyTimespan {
  constructor(readonly micros: number) {}
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** Python str() of a timedelta: `1 day, 2:03:04.500000`. */
export function timespanStr(t: PyTimespan): string {
  let days = Math.floor(t.micros / 86_400_000_000);
  let rest = t.micros - days * 86_400_000_000;
  const us = rest % 1_000_000;
  rest = (rest - us) / 1_000_000;
  const h = Math.floor(rest / 3600);
  const m = Math.floor((rest % 3600) / 60);
  const sec = rest % 60;
  const clock = `${h}:${pad2(m)}:${pad2(sec)}${us ? `.${String(us).padStart(6, '0')}` : ''}`;
  if (days === 0) return clock;
  const word = Math.abs(days) === 1 ? 'day' : 'days';
  days = days as number;
  return `${days} ${word}, ${clock}`;
}

/** Python str() of an aware datetime: `2020-01-02 03:04:05+00:00`. */
export function dateTimeStr(d: PyDateTime, sep = ' '): string {
  const f = d.fields();
  const off = d.offsetMicros / 60_000_000;
  const sign = off < 0 ? '-' : '+';
  const oh = Math.floor(Math.abs(off) / 60);
  const om = Math.abs(off) % 60;
  return `${String(f.year).padStart(4, '0')}-${pad2(f.month)}-${pad2(f.day)}${sep}${pad2(f.hour)}:${pad2(f.minute)}:${pad2(f.second)}${
    f.microsecond ? `.${String(f.microsecond).padStart(6, '0')}` : ''
  }${sign}${pad2(oh)}:${pad2(om)}`;
}

/**
 * A lazily produced (possibly infinite) sequence, e.g. `sequence()`. A `once` sequence is a
 * Python iterator (yaql's `where`, `select`, `take`…): every consumer continues where the last one
 * stopped, so it yields its items only once and each item is computed only when it is pulled.
 */
export class LazySeq {
  readonly produce: () => Iterator<unknown>;
  constructor(
    produce: () => Iterator<unknown>,
    /** How Python would name the iterator object (`generator object do_unique`). */
    readonly label = 'generator object',
    readonly once = false,
  ) {
    if (!once) {
      this.produce = produce;
      return;
    }
    let it: Iterator<unknown> | undefined;
    this.produce = () => (it ??= produce());
  }
}

export type PyDict = Map<unknown, unknown>;

const TUPLE = Symbol('tuple');
/** Marks an array as a Python tuple (rendered `(1, 2)`); it behaves as a list everywhere else. */
export function markTuple<T extends unknown[]>(a: T): T {
  Object.defineProperty(a, TUPLE, { value: true, enumerable: false });
  return a;
}
const ITER = Symbol('iterator');
/**
 * Marks an array as the result of a lazy yaql query (a Python iterator): it cannot be indexed and
 * equals nothing but itself, as in the reference; everything else treats it as a list.
 */
export function markIter<T extends unknown[]>(a: T): T {
  Object.defineProperty(a, ITER, { value: true, enumerable: false });
  return a;
}
export const isIter = (v: unknown): boolean =>
  Array.isArray(v) && (v as unknown as Record<symbol, unknown>)[ITER] !== undefined;
const ORDERING = Symbol('ordering');
/**
 * Marks an iterator array as yaql's OrderingIterable (`orderBy`, `thenBy`): iterable again and again,
 * but not a Python iterator (no `__next__`), so `len()` (which takes a sequence, a set, a dict or an
 * iterator) refuses it, and it prints as the object it is.
 */
export function markOrdering<T extends unknown[]>(a: T): T {
  markIter(a);
  Object.defineProperty(a, ORDERING, { value: true, enumerable: false });
  return a;
}
export const isOrdering = (v: unknown): boolean =>
  Array.isArray(v) && (v as unknown as Record<symbol, unknown>)[ORDERING] !== undefined;
/**
 * Marks an array as a dict view (`keys()`, `values()`, `items()`): like an iterator it cannot be
 * indexed, but its truth is its length and list(...)/set(...) take it as one item.
 */
export function markView<T extends unknown[]>(a: T, kind?: 'Keys' | 'Values' | 'Items', of?: PyDict): T {
  Object.defineProperty(a, ITER, { value: 'view', enumerable: false });
  if (kind && of)
    Object.defineProperty(a, VIEW_OF, { value: { kind, of }, enumerable: false, configurable: true });
  return a;
}
/** yaql's output conversion reads a view out into a list: it no longer prints as the view. */
export function forgetViewSource(a: unknown[]): void {
  delete (a as unknown as Record<symbol, unknown>)[VIEW_OF];
}
const VIEW_OF = Symbol('view-of');
/** The dict a yaql `keys()`/`values()`/`items()` view shows, as its repr names it. */
const viewOf = (v: unknown): { kind: string; of: PyDict } | undefined =>
  Array.isArray(v)
    ? ((v as unknown as Record<symbol, unknown>)[VIEW_OF] as { kind: string; of: PyDict })
    : undefined;
export const isView = (v: unknown): boolean =>
  Array.isArray(v) && (v as unknown as Record<symbol, unknown>)[ITER] === 'view';
const PYLIST = Symbol('pylist');
/** Marks an array as a Python list inside yaql (where collections are otherwise tuples). */
export function markPyList<T extends unknown[]>(a: T): T {
  Object.defineProperty(a, PYLIST, { value: true, enumerable: false });
  return a;
}
export const isPyList = (v: unknown): boolean =>
  Array.isArray(v) && (v as unknown as Record<symbol, unknown>)[PYLIST] === true;
/** Gives a rebuilt array the markers (tuple, iterator, view, list) of the one it replaces. */
export function copyMarks<T extends unknown[]>(from: unknown[], to: T): T {
  const marks = from as unknown as Record<symbol, unknown>;
  for (const s of [TUPLE, ITER, PYLIST])
    if (marks[s] !== undefined) Object.defineProperty(to, s, { value: marks[s], enumerable: false });
  return to;
}
export const isTuple = (v: unknown): boolean =>
  Array.isArray(v) && (v as unknown as Record<symbol, unknown>)[TUPLE] === true;

/** Upper bound on how many items a lazy sequence may yield before we give up (yaql limitIterators). */
export const MAX_ITEMS = 1_000_000;
/** Upper bound on the length of a string an expression may build (yaql memoryQuota in spirit). */
export const MAX_STRING = 10_000_000;

/** Fails when a result would exceed the size quota; returns the planned size otherwise. */
export function checkSize(n: number, what: 'string' | 'collection'): number {
  if (n > (what === 'string' ? MAX_STRING : MAX_ITEMS))
    fail(`Expression result exceeds the ${what} size quota`, 'MemoryQuotaExceededException');
  return n;
}

export const isDict = (v: unknown): v is PyDict => v instanceof Map;
export const isList = (v: unknown): v is unknown[] => Array.isArray(v);
export const isString = (v: unknown): v is string => typeof v === 'string';
export const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
export const isNumber = (v: unknown): v is number | PyFloat =>
  typeof v === 'number' || v instanceof PyFloat || v instanceof PyBigInt;
export const isFloat = (v: unknown): boolean =>
  v instanceof PyFloat || (typeof v === 'number' && !Number.isInteger(v));
export const isInt = (v: unknown): v is number =>
  (typeof v === 'number' && Number.isInteger(v)) || v instanceof PyBigInt;
export const num = (v: number | PyFloat): number =>
  typeof v === 'number' ? v : Number((v as PyFloat | PyBigInt).value);
/** Makes a float value, boxing it when integral so that it keeps its float type. */
export const mkFloat = (n: number): number | PyFloat => (Number.isInteger(n) ? new PyFloat(n) : n);
export const isIterable = (v: unknown): boolean =>
  Array.isArray(v) || v instanceof PySet || v instanceof LazySeq || v instanceof Map;

/** Stable identity key for hashing (sets, distinct, groupBy): Python equality semantics. */
export function hashKey(v: unknown): string {
  if (v === null || v === undefined) return 'n';
  if (typeof v === 'boolean') return v ? 'i1' : 'i0';
  if (typeof v === 'number') return `i${v}`;
  if (v instanceof PyFloat) return `i${v.value}`;
  if (v instanceof PyBigInt) return `i${v.value}`;
  if (typeof v === 'string') return `s${v}`;
  if (Array.isArray(v)) return `l[${v.map(hashKey).join(',')}]`;
  if (v instanceof Map)
    return `d{${[...v.entries()].map(([k, x]) => `${hashKey(k)}:${hashKey(x)}`).join(',')}}`;
  if (v instanceof PySet) return `t{${[...v.items.keys()].sort().join(',')}}`;
  if (v instanceof PyDateTime) return `D${v.utcMicros}`;
  if (v instanceof PyTimespan) return `T${v.micros}`;
  return `o${String(v)}`;
}

/** Normalizes a dict key: integral floats become plain numbers (Python: hash(1.0) == hash(1)). */
export const dictKey = (k: unknown): unknown => (k instanceof PyFloat ? k.value : k);

export function dictGet(d: PyDict, k: unknown): unknown {
  return d.get(dictKey(k));
}
export function dictHas(d: PyDict, k: unknown): boolean {
  return d.has(dictKey(k));
}

/** Python truthiness. */
export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false) return false;
  if (v === true) return true;
  // A Python iterator is always true, even when it would yield nothing (a dict view is not).
  if (isIter(v) && !isView(v)) return true;
  if (typeof v === 'number') return v !== 0;
  if (v instanceof PyFloat) return v.value !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  if (v instanceof PySet) return v.size > 0;
  if (v instanceof PyTimespan) return v.micros !== 0;
  if (v instanceof PyComplex) return v.re !== 0 || v.im !== 0;
  return true;
}

/** Python `==` (deep; numbers compare by value, booleans equal 0/1). */
export function pyEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if ((a instanceof PyBigInt || b instanceof PyBigInt) && isInt(a) && isInt(b)) return bigOf(a) === bigOf(b);
  const an = numericOf(a);
  const bn = numericOf(b);
  if (a instanceof PyComplex || b instanceof PyComplex) {
    const [ar, ai] = a instanceof PyComplex ? [a.re, a.im] : [an, 0];
    const [br, bi] = b instanceof PyComplex ? [b.re, b.im] : [bn, 0];
    return ar !== undefined && br !== undefined && ar === br && ai === bi;
  }
  if (an !== undefined && bn !== undefined) return an === bn;
  if (typeof a === 'string' || typeof b === 'string') return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (isIter(a) || isIter(b)) return false;
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!pyEquals(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) {
      if (!b.has(k) || !pyEquals(v, b.get(k))) return false;
    }
    return true;
  }
  if (a instanceof PySet && b instanceof PySet) {
    if (a.size !== b.size) return false;
    for (const k of a.items.keys()) if (!b.items.has(k)) return false;
    return true;
  }
  if (a instanceof PyDateTime && b instanceof PyDateTime) return a.utcMicros === b.utcMicros;
  if (a instanceof PyTimespan && b instanceof PyTimespan) return a.micros === b.micros;
  return false;
}

function numericOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (v instanceof PyBigInt) return Number(v.value);
  if (v instanceof PyFloat) return v.value;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return undefined;
}

/** Python's type name, used in error messages. */
export function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (isInt(v)) return 'int';
  if (isNumber(v)) return 'float';
  if (typeof v === 'string') return 'str';
  if (v instanceof PyComplex) return 'complex';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Map) return 'dict';
  if (v instanceof PySet) return 'set';
  if (v instanceof LazySeq) return v.once ? v.label.replace(/ object.*$/, '') : 'generator';
  if (v instanceof PyDateTime) return 'datetime';
  if (v instanceof PyTimespan) return 'timedelta';
  if (typeof v === 'function') return 'function';
  return 'object';
}

const PLAIN_DICT = Symbol('plain-dict');
/** Marks a dict yaql hands out as a plain Python dict (a regex match record), not a FrozenDict. */
export function markPlainDict<T extends Map<unknown, unknown>>(d: T): T {
  Object.defineProperty(d, PLAIN_DICT, { value: true, enumerable: false });
  return d;
}

/**
 * Python's type name of a value as yaql holds it: collections from the data and built by yaql are
 * tuples, FrozenDicts and frozensets (convert_input_data), except the few functions that return
 * lists, and the match records of regex selectors (plain dicts).
 */
export function yaqlTypeName(v: unknown): string {
  if (Array.isArray(v) && !isPyList(v)) return isIter(v) && !isView(v) ? 'generator' : 'tuple';
  if (v instanceof Map)
    return (v as unknown as Record<symbol, unknown>)[PLAIN_DICT] === true ? 'dict' : 'FrozenDict';
  if (v instanceof PySet) return 'frozenset';
  return pyTypeName(v);
}

/**
 * Python ordering (`<`): numbers with numbers, strings with strings, sequences lexicographically.
 * `nullLowest` mirrors yaql, where null compares lower than anything; Python itself raises. `op` is
 * the operator Python applied, as its TypeError names it (`max()` compares with `>`).
 */
export function pyCompare(a: unknown, b: unknown, nullLowest = false, op = '<'): number {
  if (
    (a instanceof PyBigInt || b instanceof PyBigInt) &&
    (isInt(a) || typeof a === 'boolean') &&
    (isInt(b) || typeof b === 'boolean')
  ) {
    const x = bigOf(a);
    const y = bigOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const an = numericOf(a);
  const bn = numericOf(b);
  if (an !== undefined && bn !== undefined) return an < bn ? -1 : an > bn ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (!pyEquals(a[i], b[i])) return pyCompare(a[i], b[i], nullLowest, op);
    }
    return a.length - b.length;
  }
  if (a instanceof PyDateTime && b instanceof PyDateTime) return a.utcMicros - b.utcMicros;
  if (a instanceof PyTimespan && b instanceof PyTimespan) return a.micros - b.micros;
  if (nullLowest && (a === null || b === null)) {
    if (a === null && b === null) return 0;
    return a === null ? -1 : 1;
  }
  return fail(
    `'${op}' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`,
    'TypeError',
  );
}

/** Materializes any iterable value (list, set, lazy sequence, dict keys) into an array. */
export function toArray(v: unknown, what = 'collection'): unknown[] {
  if (Array.isArray(v)) return v;
  if (v instanceof PySet) return v.values();
  if (v instanceof Map) return [...v.keys()];
  if (v instanceof LazySeq) {
    const out: unknown[] = [];
    const it = v.produce();
    for (let r = it.next(); !r.done; r = it.next()) {
      out.push(r.value);
      if (out.length > MAX_ITEMS) fail('Iterator limit exceeded', 'CollectionTooLargeException');
    }
    return out;
  }
  return fail(`${what} of type '${pyTypeName(v)}' is not iterable`, 'TypeError');
}

/** Iterates lazily (so `sequence().take(3)` terminates). */
export function* iterate(v: unknown): Generator<unknown> {
  if (v instanceof LazySeq) {
    const it = v.produce();
    let n = 0;
    for (let r = it.next(); !r.done; r = it.next()) {
      if (++n > MAX_ITEMS) fail('Iterator limit exceeded', 'CollectionTooLargeException');
      yield r.value;
    }
    return;
  }
  yield* toArray(v);
}

// ---------------------------------------------------------------------------------------------
// Host conversion

/**
 * Converts host data (plain JSON-like JS values) into the value model: plain objects become Maps,
 * arrays are copied. Anything that is not plain data (functions, class instances) is refused, so no
 * host object or prototype is ever reachable from an expression.
 */
export function fromHost(v: unknown, depth = 0): unknown {
  if (v instanceof PreparedContext) return v.value;
  if (depth > 200) fail('Input data is nested too deeply', 'ValueError');
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      // Integral numbers beyond 2^53 can only have come from a float (JSON `1e21`): keep them floats.
      return Number.isInteger(v) && Math.abs(v) >= 2 ** 53 ? new PyFloat(v) : v;
    case 'bigint':
      return Number(v);
    case 'object':
      break;
    case 'function':
    case 'symbol':
    case 'undefined':
      return null;
  }
  if (Array.isArray(v)) return v.map((x) => fromHost(x, depth + 1));
  if (
    v instanceof Map ||
    v instanceof PySet ||
    v instanceof PyFloat ||
    v instanceof PyBigInt ||
    v instanceof LazySeq ||
    v instanceof PyDateTime ||
    v instanceof PyTimespan ||
    v instanceof PyDate
  )
    return v;
  if (v instanceof Date) return formatTimestamp(v);
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return String(v);
  const m = new Map<unknown, unknown>();
  for (const k of Object.keys(v)) m.set(k, fromHost((v as Record<string, unknown>)[k], depth + 1));
  return m;
}

/**
 * A data context converted once for many evaluations (see `prepareContext`). Converting host data
 * costs time proportional to its size; an engine evaluating several expressions against the same
 * task context should prepare it once.
 */
export class PreparedContext {
  constructor(readonly value: unknown) {}
}

/** `YYYY-MM-DD HH:MM:SS` (UTC), Mistral's timestamp format in task()/execution() maps. */
export function formatTimestamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(
    d.getUTCMinutes(),
  )}:${p(d.getUTCSeconds())}`;
}

/**
 * Converts a result back to plain JSON-like data: Maps become plain objects (own data properties,
 * so a `__proto__` key stays a key), sets and lazy sequences become arrays, floats become numbers.
 */
export function toHost(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof PyFloat) return v.value;
  // JSON numbers are doubles here: a big int leaves as the nearest one
  if (v instanceof PyBigInt) return Number(v.value);
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(toHost);
  if (v instanceof PySet) return v.values().map(toHost);
  if (v instanceof LazySeq) return toArray(v).map(toHost);
  if (v instanceof PyDateTime || v instanceof PyTimespan || v instanceof PyDate) return pyStr(v);
  if (v instanceof Map) {
    return Object.fromEntries([...v.entries()].map(([k, x]) => [pyKeyString(k), toHost(x)]));
  }
  return null;
}

function pyKeyString(k: unknown): string {
  return typeof k === 'string' ? k : pyStr(k);
}

// ---------------------------------------------------------------------------------------------
// Python rendering

/** Python `repr()` of a float. */
export function floatRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const [mant, expStr] = n.toExponential().split('e') as [string, string];
  const exp = Number(expStr);
  if (exp < -4 || exp >= 16) {
    return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const s = String(n);
  return s.includes('.') ? s : `${s}.0`;
}

/** Python `repr()` of a complex: `(re±imj)`, or `imj` alone when the real part is +0. */
function complexRepr(c: PyComplex): string {
  // repr's shortest digits without the '.0' a float adds
  const part = (n: number): string => floatRepr(n).replace(/\.0$/, '');
  const im = part(c.im);
  if (c.re === 0 && !Object.is(c.re, -0)) return `${im}j`;
  return `(${part(c.re)}${im.startsWith('-') ? '' : '+'}${im}j)`;
}

/** Python `repr()` of an int: all digits, never exponent notation. */
export function intRepr(n: number): string {
  return Math.abs(n) < 1e21 ? String(n) : BigInt(n).toString();
}

/** Python `repr()` of a string. */
export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0x80 && c < 0xa0) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

/** Python `repr()`; `tuples` renders lists in tuple form as yaql's internal tuples print. */
export function pyRepr(v: unknown, tuples = false): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isInteger(v) ? intRepr(v) : floatRepr(v);
  if (v instanceof PyFloat) return floatRepr(v.value);
  if (v instanceof PyBigInt) return v.value.toString();
  if (v instanceof PyComplex) return complexRepr(v);
  if (typeof v === 'string') return strRepr(v);
  // the reference prints the object's memory address too, which differs from run to run
  if (isOrdering(v)) return '<yaql.standard_library.queries.OrderingIterable object>';
  // collections.abc's views of yaql's FrozenDict print the dict (its collections are tuples)
  const view = viewOf(v);
  if (view) return `${view.kind}View(${pyRepr(view.of, true)})`;
  if (Array.isArray(v)) {
    const inner = v.map((x) => pyRepr(x, tuples));
    if ((!tuples && !isTuple(v)) || isPyList(v)) return `[${inner.join(', ')}]`;
    return inner.length === 1 ? `(${inner[0]},)` : `(${inner.join(', ')})`;
  }
  if (v instanceof Map) {
    return `{${[...v.entries()].map(([k, x]) => `${pyRepr(k, tuples)}: ${pyRepr(x, tuples)}`).join(', ')}}`;
  }
  if (v instanceof PySet) {
    if (v.size === 0) return tuples ? 'frozenset()' : 'set()';
    const body = `{${v
      .values()
      .map((x) => pyRepr(x, tuples))
      .join(', ')}}`;
    return tuples ? `frozenset(${body})` : body;
  }
  if (v instanceof LazySeq) return v.once ? `<${v.label}>` : pyRepr(toArray(v), tuples);
  if (v instanceof PyDateTime) {
    const f = v.fields();
    const off = v.offsetMicros;
    const tz = off === 0 ? 'tzutc()' : `tzoffset(None, ${off / 1_000_000})`;
    const parts = [f.year, f.month, f.day, f.hour, f.minute];
    if (f.second || f.microsecond) parts.push(f.second);
    if (f.microsecond) parts.push(f.microsecond);
    return `datetime.datetime(${parts.join(', ')}, tzinfo=${tz})`;
  }
  if (v instanceof PyDate) return `datetime.date(${v.year}, ${v.month}, ${v.day})`;
  if (v instanceof PyTimespan) {
    const days = Math.floor(v.micros / 86_400_000_000);
    const rest = v.micros - days * 86_400_000_000;
    const secs = Math.floor(rest / 1_000_000);
    const us = rest % 1_000_000;
    const parts = [];
    if (days) parts.push(`days=${days}`);
    if (secs) parts.push(`seconds=${secs}`);
    if (us) parts.push(`microseconds=${us}`);
    return `datetime.timedelta(${parts.length > 0 ? parts.join(', ') : '0'})`;
  }
  return '<object>';
}

/** Python `str()`: strings as-is, everything else as repr. Used to embed values in text (DSL-8.5). */
export function pyStr(v: unknown): string {
  if (v instanceof PyDateTime) return dateTimeStr(v);
  if (v instanceof PyTimespan) return timespanStr(v);
  if (v instanceof PyDate) return v.toString();
  return typeof v === 'string' ? v : pyRepr(v);
}
