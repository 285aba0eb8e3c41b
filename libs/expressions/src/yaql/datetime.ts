import { fail } from '../errors';
import { DAY, fromFields, int, parseDateTime, strftime, strptime, US } from '../datetime';
import { isFloat, isInt, isNumber, mkFloat, num, PyDateTime, PyTimespan } from '../values';
import type { Invocation } from './runtime';
import { MISSING } from './runtime';
import { def, STDLIB } from './stdlib';

/**
 * yaql's date and time functions: datetime(...) / timespan(...) constructors, now() (the clock comes
 * from the host: expressions have no hidden clock), arithmetic and comparison operators, `replace`
 * and `format` (strftime) on datetimes. Properties (`.year`, `.hours`) live in ../datetime.ts.
 */
const given = (v: unknown) => v !== MISSING;
const noMatch = (name: string): never =>
  fail(`No function "${name}" matches supplied arguments`, 'NoMatchingFunctionException');
const offsetOf = (v: unknown, fname = 'datetime'): number =>
  v === MISSING || v === null || v === undefined ? 0 : v instanceof PyTimespan ? v.micros : noMatch(fname);

const S = STDLIB;
def(
  S,
  'datetime',
  'F',
  'year?, month?, day?, hour?, minute?, second?, microsecond?, offset?, **kwargs',
  (args, inv) => {
    const named = (i: number, name: string): unknown =>
      given(args[i]) ? args[i] : inv.kwargs.has(name) ? inv.kwargs.get(name) : MISSING;
    const first = named(0, 'year');
    if (typeof first === 'string' || inv.kwargs.has('string')) {
      const text = typeof first === 'string' ? first : inv.kwargs.get('string');
      const fmt = given(args[1]) ? args[1] : inv.kwargs.get('format');
      // the string overload is datetime(string, format=null): nothing else may follow
      if (typeof text !== 'string' || args.slice(2).some(given)) return noMatch('datetime');
      const d = fmt === undefined || fmt === null ? parseDateTime(text) : strptime(text, String(fmt));
      return d;
    }
    if (
      isNumber(first) &&
      !given(named(2, 'day')) &&
      (isFloat(first) || !given(named(1, 'month')) || named(1, 'month') instanceof PyTimespan)
    ) {
      const off = offsetOf(given(args[1]) ? args[1] : (inv.kwargs.get('offset') ?? MISSING));
      return new PyDateTime(Math.round(num(first) * US), off);
    }
    const get = (i: number, name: string, dflt: number | null): number => {
      const v = named(i, name);
      if (v === MISSING) return dflt === null ? noMatch('datetime') : dflt;
      return int(v, 'datetime');
    };
    return fromFields(
      get(0, 'year', null),
      get(1, 'month', null),
      get(2, 'day', null),
      get(3, 'hour', 0),
      get(4, 'minute', 0),
      get(5, 'second', 0),
      get(6, 'microsecond', 0),
      offsetOf(named(7, 'offset')),
    );
  },
);
def(
  S,
  'timespan',
  'F',
  'days?, hours?, minutes?, seconds?, milliseconds?, microseconds?',
  ([d, h, m, s, ms, us]) => {
    // every part is an int in yaql's signature (`seconds => 1.5` does not match)
    const n = (v: unknown) => (given(v) ? (isInt(v) ? v : noMatch('timespan')) : 0);
    return new PyTimespan(
      Math.round(n(d) * DAY + n(h) * 3600 * US + n(m) * 60 * US + n(s) * US + n(ms) * 1000 + n(us)),
    );
  },
);
def(S, 'now', 'F', 'offset?', ([off], inv: Invocation) => {
  const clock = inv.scope.rt.host.now;
  if (typeof clock !== 'function')
    return fail('now() is not available in this context', 'NotImplementedError');
  const at = clock.call(inv.scope.rt.host);
  return new PyDateTime(at.getTime() * 1000, offsetOf(off, 'now'));
});
def(S, 'utctz', 'F', '', () => new PyTimespan(0));
def(S, 'localtz', 'F', '', () => new PyTimespan(0));
def(S, 'isDatetime', 'F', 'value', ([v]) => v instanceof PyDateTime);
def(S, 'isTimespan', 'F', 'value', ([v]) => v instanceof PyTimespan);

/** Wraps an operator so that date/time operands are handled first. */
function extend(name: string, handle: (a: unknown, b: unknown) => unknown): void {
  const slot = S.get(name);
  const base = slot?.fn;
  if (!slot || !base) return;
  const NOT_MINE = Symbol('not mine');
  slot.fn = {
    ...base,
    impl: (args, inv) => {
      const [a, b] = args;
      if (
        a instanceof PyDateTime ||
        a instanceof PyTimespan ||
        b instanceof PyDateTime ||
        b instanceof PyTimespan
      ) {
        const r = handle(a, b);
        if (r !== NOT_MINE) return r;
        return noMatch(name);
      }
      return base.impl(args, inv);
    },
  };
  void NOT_MINE;
}
const T = (u: number) => new PyTimespan(Math.round(u));
extend('#operator_+', (a, b) => {
  if (a instanceof PyDateTime && b instanceof PyTimespan)
    return new PyDateTime(a.utcMicros + b.micros, a.offsetMicros);
  if (a instanceof PyTimespan && b instanceof PyDateTime)
    return new PyDateTime(b.utcMicros + a.micros, b.offsetMicros);
  if (a instanceof PyTimespan && b instanceof PyTimespan) return T(a.micros + b.micros);
  return noMatch('#operator_+');
});
extend('#operator_-', (a, b) => {
  if (a instanceof PyDateTime && b instanceof PyTimespan)
    return new PyDateTime(a.utcMicros - b.micros, a.offsetMicros);
  if (a instanceof PyDateTime && b instanceof PyDateTime) return T(a.utcMicros - b.utcMicros);
  if (a instanceof PyTimespan && b instanceof PyTimespan) return T(a.micros - b.micros);
  return noMatch('#operator_-');
});
extend('#operator_*', (a, b) => {
  if (a instanceof PyTimespan && isNumber(b)) return T(a.micros * num(b));
  if (isNumber(a) && b instanceof PyTimespan) return T(b.micros * num(a));
  return noMatch('#operator_*');
});
extend('#operator_/', (a, b) => {
  if (a instanceof PyTimespan && b instanceof PyTimespan) {
    if (b.micros === 0) fail('float division by zero', 'ZeroDivisionError');
    return mkFloat(a.micros / b.micros);
  }
  if (a instanceof PyTimespan && isNumber(b)) {
    if (num(b) === 0) fail('division by zero', 'ZeroDivisionError');
    return T(a.micros / num(b));
  }
  return noMatch('#operator_/');
});
for (const [op, test] of [
  ['<', (c: number) => c < 0],
  ['>', (c: number) => c > 0],
  ['<=', (c: number) => c <= 0],
  ['>=', (c: number) => c >= 0],
] as const) {
  extend(`#operator_${op}`, (a, b) => {
    if (a instanceof PyDateTime && b instanceof PyDateTime) return test(a.utcMicros - b.utcMicros);
    if (a instanceof PyTimespan && b instanceof PyTimespan) return test(a.micros - b.micros);
    return noMatch(`#operator_${op}`);
  });
}
for (const op of ['-', '+']) {
  const slot = S.get(`#unary_operator_${op}`);
  const base = slot?.fn;
  if (slot && base) {
    slot.fn = {
      ...base,
      impl: (args, inv) =>
        args[0] instanceof PyTimespan
          ? T(op === '-' ? -args[0].micros : args[0].micros)
          : base.impl(args, inv),
    };
  }
}

/** `dt.replace(...)` and `dt.format(fmt)` share their names with the string methods. */
function extendMethod(name: string, handle: (args: unknown[], inv: Invocation) => unknown): void {
  const slot = S.get(name);
  const base = slot?.method;
  if (!slot || !base) return;
  const params = base.params.map((p, i) => (i === 0 ? p : { ...p, optional: true }));
  slot.method = {
    params,
    kwargs: true,
    impl: (args, inv) => (args[0] instanceof PyDateTime ? handle(args, inv) : base.impl(args, inv)),
  };
}
extendMethod('replace', (args, inv) => {
  const d = args[0] as PyDateTime;
  const f = d.fields();
  const pick = (name: keyof typeof f): number =>
    inv.kwargs.has(name) ? int(inv.kwargs.get(name), 'replace') : f[name];
  const off = inv.kwargs.has('offset') ? offsetOf(inv.kwargs.get('offset')) : d.offsetMicros;
  return fromFields(
    pick('year'),
    pick('month'),
    pick('day'),
    pick('hour'),
    pick('minute'),
    pick('second'),
    pick('microsecond'),
    off,
  );
});
extendMethod('format', (args) => {
  if (typeof args[1] !== 'string') return noMatch('format');
  return strftime(args[0] as PyDateTime, args[1]);
});
