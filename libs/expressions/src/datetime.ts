import { fail } from './errors';
import { isInt, mkFloat, PyDateTime, PyTimespan } from './values';

/**
 * Date and time support for yaql's datetime/timespan values: datetime(...) / timespan(...) constructors, now() (the clock comes
 * from the host: expressions have no hidden clock), properties (`.year`, `.hours`, ...), arithmetic
 * and comparison operators, `replace` and `format` (strftime) on datetimes.
 */

export const US = 1_000_000;
export const DAY = 86_400 * US;
const noMatch = (name: string): never =>
  fail(`No function "${name}" matches supplied arguments`, 'NoMatchingFunctionException');
export const int = (v: unknown, name: string): number => (isInt(v) ? v : noMatch(name));

export function fromFields(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  s: number,
  us: number,
  offset: number,
): PyDateTime {
  if (y < 1 || y > 9999) fail(`year ${y} is out of range`, 'ValueError');
  if (mo < 1 || mo > 12) fail('month must be in 1..12', 'ValueError');
  const dim = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d < 1 || d > dim) fail('day is out of range for month', 'ValueError');
  if (h < 0 || h > 23) fail('hour must be in 0..23', 'ValueError');
  if (mi < 0 || mi > 59) fail('minute must be in 0..59', 'ValueError');
  if (s < 0 || s > 59) fail('second must be in 0..59', 'ValueError');
  if (us < 0 || us > 999_999) fail('microsecond must be in 0..999999', 'ValueError');
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return new PyDateTime(date.getTime() * 1000 + us - offset, offset);
}

/** Parses ISO-8601-like text the way dateutil does for the common forms; naive → UTC. */
export function parseDateTime(text: string): PyDateTime {
  const m =
    /^\s*(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{2}):?(\d{2})(?::?(\d{2})(?:[.,](\d{1,6})\d*)?)?)?\s*(Z|UTC|[+-]\d{2}(?::?\d{2})?)?\s*$/i.exec(
      text,
    );
  if (!m)
    return fail(
      text.trim() === '' ? `String does not contain a date: ${text}` : `Unknown string format: ${text}`,
      'ParserError',
    );
  let offset = 0;
  const z = m[8];
  if (z && !/^(z|utc)$/i.test(z)) {
    const sign = z.startsWith('-') ? -1 : 1;
    const digits = z.slice(1).replace(':', '');
    offset = sign * (Number(digits.slice(0, 2)) * 3600 + Number(digits.slice(2, 4) || '0') * 60) * US;
  }
  const frac = m[7] ? Number(m[7].padEnd(6, '0')) : 0;
  return fromFields(
    Number(m[1]),
    Number(m[2]),
    Number(m[3]),
    Number(m[4] ?? 0),
    Number(m[5] ?? 0),
    Number(m[6] ?? 0),
    frac,
    offset,
  );
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const p2 = (n: number) => String(n).padStart(2, '0');

function zoneText(off: number, colon: boolean): string {
  const mins = off / 60_000_000;
  const sign = mins < 0 ? '-' : '+';
  return `${sign}${p2(Math.floor(Math.abs(mins) / 60))}${colon ? ':' : ''}${p2(Math.abs(mins) % 60)}`;
}

/** Python strftime for the common directives. */
export function strftime(d: PyDateTime, fmt: string): string {
  const f = d.fields();
  const startOfYear = Date.UTC(f.year, 0, 1);
  const doy = Math.floor((Date.UTC(f.year, f.month - 1, f.day) - startOfYear) / 86_400_000) + 1;
  return fmt.replace(/%([a-zA-Z%])/g, (m, c: string) => {
    switch (c) {
      case 'Y':
        return String(f.year).padStart(4, '0');
      case 'y':
        return p2(f.year % 100);
      case 'm':
        return p2(f.month);
      case 'd':
        return p2(f.day);
      case 'H':
        return p2(f.hour);
      case 'I':
        return p2(f.hour % 12 || 12);
      case 'p':
        return f.hour < 12 ? 'AM' : 'PM';
      case 'M':
        return p2(f.minute);
      case 'S':
        return p2(f.second);
      case 'f':
        return String(f.microsecond).padStart(6, '0');
      case 'j':
        return String(doy).padStart(3, '0');
      case 'a':
        return DAYS[f.weekday]!.slice(0, 3);
      case 'A':
        return DAYS[f.weekday]!;
      case 'w':
        return String((f.weekday + 1) % 7);
      case 'b':
        return MONTHS[f.month - 1]!.slice(0, 3);
      case 'B':
        return MONTHS[f.month - 1]!;
      case 'z':
        return zoneText(d.offsetMicros, false);
      case 'Z':
        return d.offsetMicros === 0 ? 'UTC' : '';
      case '%':
        return '%';
      default:
        return m;
    }
  });
}

/** Python strptime for the common directives; the result is UTC when the format has no %z. */
export function strptime(text: string, fmt: string): PyDateTime {
  const fields: Record<string, number> = { Y: 1900, m: 1, d: 1, H: 0, M: 0, S: 0, f: 0 };
  let offset = 0;
  let pm: boolean | null = null;
  let re = '^';
  const order: string[] = [];
  for (let i = 0; i < fmt.length; i++) {
    const ch = fmt[i]!;
    if (ch === '%' && i + 1 < fmt.length) {
      const c = fmt[++i]!;
      const pat: Record<string, string> = {
        Y: '(\\d{4})',
        y: '(\\d{2})',
        m: '(\\d{1,2})',
        d: '(\\d{1,2})',
        H: '(\\d{1,2})',
        I: '(\\d{1,2})',
        M: '(\\d{1,2})',
        S: '(\\d{1,2})',
        f: '(\\d{1,6})',
        p: '(AM|PM|am|pm)',
        z: '([+-]\\d{2}:?\\d{2}|Z)',
        b: '([A-Za-z]{3})',
        B: '([A-Za-z]+)',
        '%': '%',
      };
      const pc = Object.prototype.hasOwnProperty.call(pat, c) ? pat[c] : undefined;
      if (pc === undefined) fail(`'${c}' is a bad directive in format '${fmt}'`, 'ValueError');
      re += pc;
      if (c !== '%') order.push(c);
    } else re += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  const m = new RegExp(`${re}$`).exec(text);
  if (!m)
    return fail(
      `time data ${JSON.stringify(text)} does not match format ${JSON.stringify(fmt)}`,
      'ValueError',
    );
  order.forEach((c, i) => {
    const v = m[i + 1]!;
    if (c === 'y') fields.Y = 2000 + Number(v) - (Number(v) >= 69 ? 100 : 0);
    else if (c === 'I') fields.H = Number(v) % 12;
    else if (c === 'p') pm = /pm/i.test(v);
    else if (c === 'f') fields.f = Number(v.padEnd(6, '0'));
    else if (c === 'b' || c === 'B')
      fields.m = MONTHS.findIndex((x) => x.toLowerCase().startsWith(v.toLowerCase().slice(0, 3))) + 1;
    else if (c === 'z')
      offset =
        v === 'Z'
          ? 0
          : (v.startsWith('-') ? -1 : 1) *
            (Number(v.slice(1, 3)) * 3600 + Number(v.replace(':', '').slice(3, 5)) * 60) *
            US;
    else fields[c] = Number(v);
  });
  if (pm === true) fields.H = (fields.H ?? 0) + 12;
  return fromFields(fields.Y!, fields.m!, fields.d!, fields.H!, fields.M!, fields.S!, fields.f!, offset);
}

/** `.year`, `.hours`, ...: yaql properties of datetimes and timespans. */
export function dateProperty(obj: PyDateTime | PyTimespan, name: string): unknown {
  if (obj instanceof PyTimespan) {
    const u = obj.micros;
    switch (name) {
      case 'microseconds':
        return u;
      case 'milliseconds':
        return mkFloat(u / 1000);
      case 'seconds':
        return mkFloat(u / US);
      case 'minutes':
        return mkFloat(u / (60 * US));
      case 'hours':
        return mkFloat(u / (3600 * US));
      case 'days':
        return mkFloat(u / DAY);
      default:
        return fail(`Unknown function "#property#${name}"`, 'NoFunctionRegisteredException');
    }
  }
  const f = obj.fields();
  switch (name) {
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
    case 'minute':
    case 'second':
    case 'microsecond':
    case 'weekday':
      return f[name];
    case 'date':
      return fromFields(f.year, f.month, f.day, 0, 0, 0, 0, obj.offsetMicros);
    case 'time':
      return new PyTimespan(((f.hour * 60 + f.minute) * 60 + f.second) * US + f.microsecond);
    case 'utc':
      // yaql computes `dt - dt.utcoffset()`, which keeps the zone label (reference behaviour).
      return new PyDateTime(obj.utcMicros - obj.offsetMicros, obj.offsetMicros);
    case 'offset':
      return new PyTimespan(obj.offsetMicros);
    case 'timestamp':
      // (dt.utc - epoch) in yaql: the offset is applied twice for non-UTC datetimes (reference).
      return mkFloat((obj.utcMicros - obj.offsetMicros) / US);
    default:
      return fail(`Unknown function "#property#${name}"`, 'NoFunctionRegisteredException');
  }
}
