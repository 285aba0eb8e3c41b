import { fail } from './errors';
import {
  dictGet,
  dictHas,
  floatRepr,
  isDict,
  isFloat,
  isInt,
  isNumber,
  num,
  PyComplex,
  pyRepr,
} from './values';

/**
 * Python built-in behaviours both evaluators need: str.split/strip/format, round(), and regular
 * expressions written in Python's `re` dialect.
 */

const PY_WS =
  ' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

export function pyStrip(s: string, chars: string | null, side: 'left' | 'right' | 'both'): string {
  const set = chars ?? PY_WS;
  const cs = Array.from(s);
  let b = 0;
  let e = cs.length;
  if (side !== 'right') while (b < e && set.includes(cs[b]!)) b++;
  if (side !== 'left') while (e > b && set.includes(cs[e - 1]!)) e--;
  return cs.slice(b, e).join('');
}

// eslint-disable-next-line no-control-regex -- Python's str.split() also splits on \x1c-\x1f
const PY_WS_RUN = /[\s\x1c-\x1f\x85]+/u;
// eslint-disable-next-line no-control-regex -- as above
const PY_WS_LAST = /[\s\x1c-\x1f\x85]+(?!.*[\s\x1c-\x1f\x85])/su;

/** str.split / str.rsplit. */
export function pySplit(s: string, sep: string | null, max: number, fromRight: boolean): string[] {
  if (sep === '') return fail('empty separator', 'ValueError');
  if (sep === null) {
    const words: string[] = [];
    if (!fromRight) {
      let rest = pyStrip(s, null, 'left');
      while (rest.length > 0) {
        if (max >= 0 && words.length >= max) {
          words.push(rest);
          return words;
        }
        const m = PY_WS_RUN.exec(rest);
        if (!m) {
          words.push(rest);
          break;
        }
        words.push(rest.slice(0, m.index));
        rest = rest.slice(m.index + m[0].length);
      }
      return words;
    }
    let rest = pyStrip(s, null, 'right');
    while (rest.length > 0) {
      if (max >= 0 && words.length >= max) {
        words.unshift(rest);
        return words;
      }
      const m = PY_WS_LAST.exec(rest);
      if (!m) {
        words.unshift(rest);
        break;
      }
      words.unshift(rest.slice(m.index + m[0].length));
      rest = rest.slice(0, m.index);
    }
    return words;
  }
  const parts = s.split(sep);
  if (max < 0 || parts.length - 1 <= max) return parts;
  if (!fromRight) return [...parts.slice(0, max), parts.slice(max).join(sep)];
  return [parts.slice(0, parts.length - max).join(sep), ...parts.slice(parts.length - max)];
}

/** round() with banker's rounding on the exact binary value, like Python 3. */
export function pyRound(n: number, ndigits: number): number {
  if (!Number.isFinite(n)) return n;
  if (ndigits < 0) {
    const f = 10 ** -ndigits;
    const x = n / f;
    const fl = Math.floor(x);
    const diff = x - fl;
    const r = diff > 0.5 ? fl + 1 : diff < 0.5 ? fl : fl % 2 === 0 ? fl : fl + 1;
    return r * f;
  }
  if (ndigits > 80) return n;
  const neg = n < 0;
  const exact = Math.abs(n).toFixed(Math.min(100, ndigits + 20));
  const dot = exact.indexOf('.');
  const keep = exact.slice(0, dot + 1 + ndigits).replace(/\.$/, '');
  const rest = exact.slice(dot + 1 + ndigits);
  const lastDigit = Number(keep.replace('.', '').slice(-1));
  let up: boolean;
  if (rest[0]! > '5') up = true;
  else if (rest[0]! < '5') up = false;
  else if (/[1-9]/.test(rest.slice(1))) up = true;
  else up = lastDigit % 2 === 1;
  let value = Number(keep);
  if (up) value = Number((value + 10 ** -ndigits).toFixed(ndigits));
  return neg ? -value : value;
}

/** Translates a Python `re` pattern into a JS RegExp (named groups, \A, \Z, inline flags). */
/**
 * The first error Python's `re` parser meets in a pattern, in its words (`missing ), unterminated
 * subpattern at position 0`), or null when it finds none of the ones checked: unbalanced groups,
 * unterminated sets, repeats of nothing or of a repeat, unknown escapes of ASCII letters.
 */
export function pyPatternError(p: string): string | null {
  const open: number[] = [];
  let atom = false; // something repeatable precedes
  let repeated = false; // a repeat (with its optional lazy `?`) precedes
  for (let i = 0; i < p.length;) {
    const c = p[i]!;
    if (c === '\\') {
      if (i + 1 >= p.length) return `bad escape (end of pattern) at position ${i}`;
      const e = p[i + 1]!;
      if (/[A-Za-z]/.test(e) && !'abBdDfnrsStvwWZAxuUN'.includes(e))
        return `bad escape \\${e} at position ${i}`;
      i += 2;
      atom = !'bBAZ'.includes(e);
      repeated = false;
      continue;
    }
    if (c === '[') {
      let j = i + 1;
      if (p[j] === '^') j++;
      if (p[j] === ']') j++;
      while (j < p.length && p[j] !== ']') j += p[j] === '\\' ? 2 : 1;
      if (j >= p.length) return `unterminated character set at position ${i}`;
      i = j + 1;
      atom = true;
      repeated = false;
      continue;
    }
    if (c === '(') {
      open.push(i);
      i++;
      if (p[i] === '?') {
        const m = /^\?(?:P<\w+>|P=\w+\)|<=|<!|[:=!]|[aiLmsux]+\)|#[^)]*\))/.exec(p.slice(i));
        if (m && (m[0].startsWith('?P=') || m[0].endsWith(')'))) {
          // a back-reference, an inline flag group or a comment closes at once
          open.pop();
          i += m[0].length;
          atom = m[0].startsWith('?P=');
          repeated = false;
          continue;
        }
        if (m) i += m[0].length;
      }
      atom = false;
      repeated = false;
      continue;
    }
    if (c === ')') {
      if (open.length === 0) return `unbalanced parenthesis at position ${i}`;
      open.pop();
      i++;
      atom = true;
      repeated = false;
      continue;
    }
    const brace = c === '{' ? /^\{(\d*)(,(\d*))?\}/.exec(p.slice(i)) : null;
    const isRepeat = '*+?'.includes(c) || (brace !== null && (brace[1] !== '' || brace[2] !== undefined));
    if (isRepeat) {
      if (c === '?' && repeated && p[i - 1] !== '?') {
        i++; // the lazy form of the repeat before
        continue;
      }
      if (!atom) return `${repeated ? 'multiple repeat' : 'nothing to repeat'} at position ${i}`;
      if (
        brace &&
        brace[1] !== '' &&
        brace[3] !== undefined &&
        brace[3] !== '' &&
        Number(brace[1]) > Number(brace[3])
      ) {
        return `min repeat greater than max repeat at position ${i + 1}`;
      }
      i += brace ? brace[0].length : 1;
      atom = false;
      repeated = true;
      continue;
    }
    atom = c !== '|' && c !== '^' && c !== '$';
    repeated = false;
    i++;
  }
  if (open.length > 0) return `missing ), unterminated subpattern at position ${open[open.length - 1]!}`;
  return null;
}

export function compilePyRegex(pattern: string, flags: string): RegExp {
  const refused = pyPatternError(pattern);
  if (refused !== null) fail(refused, 'error');
  let src = pattern;
  let f = flags;
  const inline = /^\(\?([aiLmsux]+)\)/.exec(src);
  if (inline) {
    src = src.slice(inline[0].length);
    for (const c of inline[1]!) if ('ims'.includes(c) && !f.includes(c)) f += c;
  }
  // Python's comment groups and `{,n}` (at most n), which JS lacks
  src = src.replace(/(?<!\\)\(\?#[^)]*\)/g, '').replace(/(?<![\\{])\{,(\d+)\}/g, '{0,$1}');
  src = src
    .replace(/\(\?P<(\w+)>/g, '(?<$1>')
    .replace(/\(\?P=(\w+)\)/g, '\\k<$1>')
    .replace(/\\A/g, '^')
    .replace(/\\Z/g, '$(?![\\s\\S])');
  try {
    return new RegExp(src, `${f}u`);
  } catch {
    try {
      return new RegExp(src, f);
    } catch (e) {
      return fail(`Invalid regular expression: ${(e as Error).message}`, 'error');
    }
  }
}

/** Python str.format() with positional/keyword fields, indexes/keys and a common spec subset. */
export function pyFormat(
  fmt: string,
  args: unknown[],
  kwargs: Map<string, unknown>,
  str: (v: unknown) => string,
): string {
  let out = '';
  let auto = 0;
  for (let i = 0; i < fmt.length; i++) {
    const ch = fmt[i]!;
    if (ch === '{') {
      if (fmt[i + 1] === '{') {
        out += '{';
        i++;
        continue;
      }
      const end = fmt.indexOf('}', i);
      if (end < 0) fail("Single '{' encountered in format string", 'ValueError');
      const field = fmt.slice(i + 1, end);
      i = end;
      const colon = field.indexOf(':');
      const bang = field.indexOf('!');
      const nameEnd = [colon, bang].filter((x) => x >= 0).reduce((a, b) => Math.min(a, b), field.length);
      const name = field.slice(0, nameEnd);
      const conv =
        bang >= 0 && (colon < 0 || bang < colon) ? field.slice(bang + 1, colon >= 0 ? colon : undefined) : '';
      const spec = colon >= 0 ? field.slice(colon + 1) : '';
      const m = /^([^.[]*)(.*)$/.exec(name)!;
      const head = m[1]!;
      let value: unknown;
      if (head === '') {
        if (auto >= args.length)
          fail(`Replacement index ${auto} out of range for positional args tuple`, 'IndexError');
        value = args[auto++];
      } else if (/^\d+$/.test(head)) {
        const k = Number(head);
        if (k >= args.length)
          fail(`Replacement index ${k} out of range for positional args tuple`, 'IndexError');
        value = args[k];
      } else {
        if (!kwargs.has(head)) fail(`'${head}'`, 'KeyError');
        value = kwargs.get(head);
      }
      for (const acc of m[2]!.matchAll(/\.(\w+)|\[([^\]]+)\]/g)) {
        const key = acc[1] ?? acc[2]!;
        if (isDict(value)) {
          const k: unknown = /^\d+$/.test(key) && !dictHas(value, key) ? Number(key) : key;
          if (!dictHas(value, k)) fail(pyRepr(k), 'KeyError');
          value = dictGet(value, k);
        } else if (Array.isArray(value) && /^\d+$/.test(key)) {
          if (Number(key) >= value.length) fail('tuple index out of range', 'IndexError');
          value = value[Number(key)];
        } else fail(`'${typeof value}' object has no attribute '${key}'`, 'AttributeError');
      }
      out += formatSpec(value, spec, conv, str);
      continue;
    }
    if (ch === '}') {
      if (fmt[i + 1] === '}') i++;
      else fail("Single '}' encountered in format string", 'ValueError');
      out += '}';
      continue;
    }
    out += ch;
  }
  return out;
}

function formatSpec(value: unknown, spec: string, conv: string, str: (v: unknown) => string): string {
  if (conv === 'r') value = pyRepr(value);
  const m = /^(?:(.)?([<>=^]))?([+\- ])?(#)?(0)?(\d+)?(,|_)?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$/s.exec(spec);
  if (!m) return fail(`Invalid format specifier '${spec}'`, 'ValueError');
  const [, fillCh, align, sign, , zero, widthS, grouping, precS, type] = m;
  let body: string;
  const numeric = isNumber(value) && typeof value !== 'boolean';
  if (type && 'eEfFgG%'.includes(type)) {
    if (!isNumber(value)) return fail(`Unknown format code '${type}' for object of type 'str'`, 'ValueError');
    const n = num(value);
    const p = precS !== undefined ? Number(precS) : 6;
    if (type === 'f' || type === 'F') body = n.toFixed(p);
    else if (type === '%') body = `${(n * 100).toFixed(p)}%`;
    else if (type === 'e' || type === 'E') {
      const [mant, ex] = n.toExponential(p).split('e') as [string, string];
      body = `${mant}e${ex.startsWith('-') ? '-' : '+'}${ex.replace(/^[+-]/, '').padStart(2, '0')}`;
      if (type === 'E') body = body.toUpperCase();
    } else body = String(Number(n.toPrecision(p || 1)));
  } else if (type === 'd' || type === 'x' || type === 'X' || type === 'o' || type === 'b') {
    if (!isInt(value))
      return fail(
        `Unknown format code '${type}' for object of type '${isFloat(value) ? 'float' : 'str'}'`,
        'ValueError',
      );
    const base = { d: 10, x: 16, X: 16, o: 8, b: 2 }[type];
    body = Math.abs(value).toString(base);
    if (type === 'X') body = body.toUpperCase();
    if (value < 0) body = `-${body}`;
  } else if (numeric && precS !== undefined && isFloat(value)) {
    body = String(Number(num(value as number).toPrecision(Number(precS))));
  } else if (numeric) {
    body = isFloat(value) ? floatRepr(num(value as number)) : String(num(value as number));
  } else {
    body = str(value);
    if (precS !== undefined) body = Array.from(body).slice(0, Number(precS)).join('');
  }
  if (numeric && grouping) {
    const [ip, fp] = body.split('.') as [string, string | undefined];
    body = ip.replace(/\B(?=(\d{3})+(?!\d))/g, grouping) + (fp !== undefined ? `.${fp}` : '');
  }
  if (numeric && sign === '+' && !body.startsWith('-')) body = `+${body}`;
  if (numeric && sign === ' ' && !body.startsWith('-')) body = ` ${body}`;
  const width = widthS ? Number(widthS) : 0;
  const fill = fillCh ?? (zero && !align ? '0' : ' ');
  const al = align ?? (zero ? '=' : numeric ? '>' : '<');
  const len = Array.from(body).length;
  if (len >= width) return body;
  const pad = width - len;
  if (al === '<') return body + fill.repeat(pad);
  if (al === '>') return fill.repeat(pad) + body;
  if (al === '^') return fill.repeat(Math.floor(pad / 2)) + body + fill.repeat(pad - Math.floor(pad / 2));
  const signCh = /^[+\- ]/.test(body) ? body[0]! : '';
  return signCh + fill.repeat(pad) + body.slice(signCh.length);
}

// ---------------------------------------------------------------------------------------------
// Python's float `**` / pow(): C's pow(), correctly rounded in glibc; Math.pow is not (V8's
// 2.5 ** 2.5 is 9.882117688026185, glibc's 9.882117688026186). exp(y·ln x) in double-double
// arithmetic (~100 bits) rounds to the same double.

type DD = [number, number];
const SPLITTER = 134217729; // 2^27 + 1
const LN2: DD = [0.6931471805599453, 2.3190468138462996e-17];

function twoSum(a: number, b: number): DD {
  const s = a + b;
  const bb = s - a;
  return [s, a - (s - bb) + (b - bb)];
}
function quickTwoSum(a: number, b: number): DD {
  const s = a + b;
  return [s, b - (s - a)];
}
function split(a: number): DD {
  const t = SPLITTER * a;
  const hi = t - (t - a);
  return [hi, a - hi];
}
function twoProd(a: number, b: number): DD {
  const p = a * b;
  const [ah, al] = split(a);
  const [bh, bl] = split(b);
  return [p, ah * bh - p + ah * bl + al * bh + al * bl];
}
function ddAdd(a: DD, b: DD): DD {
  let [s1, s2] = twoSum(a[0], b[0]);
  const [t1, t2] = twoSum(a[1], b[1]);
  s2 += t1;
  [s1, s2] = quickTwoSum(s1, s2);
  s2 += t2;
  return quickTwoSum(s1, s2);
}
function ddMul(a: DD, b: DD): DD {
  const [p1, p2] = twoProd(a[0], b[0]);
  return quickTwoSum(p1, p2 + (a[0] * b[1] + a[1] * b[0]));
}
function ddMulD(a: DD, b: number): DD {
  const [p1, p2] = twoProd(a[0], b);
  return quickTwoSum(p1, p2 + a[1] * b);
}
function ddDivD(a: DD, b: number): DD {
  const q1 = a[0] / b;
  const [p1, p2] = twoProd(q1, b);
  return quickTwoSum(q1, (a[0] - p1 - p2 + a[1]) / b);
}

/** e^a for a double-double a with |a| < 709. */
function ddExp(a: DD): DD {
  const k = Math.round(a[0] / LN2[0]);
  const kln2 = ddMulD(LN2, k);
  let r = ddAdd(a, [-kln2[0], -kln2[1]]);
  const SQUARINGS = 10;
  r = [r[0] / 1024, r[1] / 1024];
  let sum: DD = [1, 0];
  let term: DD = [1, 0];
  for (let i = 1; i <= 14; i++) {
    term = ddDivD(ddMul(term, r), i);
    sum = ddAdd(sum, term);
  }
  for (let i = 0; i < SQUARINGS; i++) sum = ddMul(sum, sum);
  const scale = 2 ** k;
  return [sum[0] * scale, sum[1] * scale];
}

/** ln x for a positive normal double, as a double-double. */
function ddLog(x: number): DD {
  // x = m · 2^e with m near 1, so that nothing overflows and ln m is small
  let e = Math.floor(Math.log2(x));
  let m = x / 2 ** e;
  if (m > Math.SQRT2) {
    m /= 2;
    e += 1;
  }
  const l0 = Math.log(m);
  // one Newton step from the double estimate: l = l0 + m·e^(−l0) − 1
  const t = ddAdd(ddMulD(ddExp([-l0, 0]), m), [-1, 0]);
  return ddAdd(ddAdd([l0, 0], t), ddMulD(LN2, e));
}

/** x ** y for floats as Python computes it (NaN where Python would make a complex number). */
export function pyPow(x: number, y: number): number {
  const approx = Math.pow(x, y);
  if (!Number.isFinite(x) || !Number.isFinite(y) || x === 0 || y === 0 || x === 1 || Number.isNaN(approx))
    return approx;
  if (
    !Number.isFinite(approx) ||
    Math.abs(approx) < 1e-300 ||
    Math.abs(approx) > 1e300 ||
    Math.abs(x) < 1e-300
  )
    return approx;
  const negative = x < 0 && Math.abs(y % 2) === 1;
  const p = ddMulD(ddLog(Math.abs(x)), y);
  const r = ddExp(p);
  const v = r[0] + r[1];
  return negative ? -v : v;
}

/**
 * Python's float power where it makes a complex number (a negative finite base, a finite
 * non-integral exponent): CPython's complex power of (x+0j) by (y+0j), i.e. |x|^y at the angle
 * atan2(0, x)·y. Null when Python's float power stays real.
 */
export function pyComplexPow(x: number, y: number): PyComplex | null {
  if (!(x < 0) || !Number.isFinite(x) || !Number.isFinite(y) || Number.isInteger(y)) return null;
  return complexPow([x, 0], [y, 0]);
}

type C = [number, number];
const cProd = (a: C, b: C): C => [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]];

/** complex `a / b` as CPython divides (Smith's method); division by zero raises. */
export function complexQuot(a: C, b: C): PyComplex {
  const [ar, ai] = a;
  const [br, bi] = b;
  if (Math.abs(br) >= Math.abs(bi)) {
    if (br === 0 && bi === 0) fail('complex division by zero', 'ZeroDivisionError');
    const ratio = bi / br;
    const denom = br + bi * ratio;
    return new PyComplex((ar + ai * ratio) / denom, (ai - ar * ratio) / denom);
  }
  if (Math.abs(bi) >= Math.abs(br)) {
    const ratio = br / bi;
    const denom = br * ratio + bi;
    return new PyComplex((ar * ratio + ai) / denom, (ai * ratio - ar) / denom);
  }
  return new PyComplex(NaN, NaN);
}

/** complex `a ** b` as CPython computes it: small integral exponents by repeated products. */
export function complexPow(a: C, b: C): PyComplex {
  const [br, bi] = b;
  if (bi === 0 && Number.isInteger(br) && Math.abs(br) <= 100) {
    const n = Math.abs(br);
    let r: C = [1, 0];
    let p: C = a;
    for (let mask = 1; mask > 0 && n >= mask; mask *= 2) {
      if (Math.floor(n / mask) % 2 === 1) r = cProd(r, p);
      p = cProd(p, p);
    }
    return br < 0 ? complexQuot([1, 0], r) : new PyComplex(r[0], r[1]);
  }
  if (br === 0 && bi === 0) return new PyComplex(1, 0);
  if (a[0] === 0 && a[1] === 0) {
    if (bi !== 0 || br < 0) fail('0.0 to a negative or complex power', 'ZeroDivisionError');
    return new PyComplex(0, 0);
  }
  const vabs = Math.hypot(a[0], a[1]);
  let len = pyPow(vabs, br);
  const at = Math.atan2(a[1], a[0]);
  let phase = at * br;
  if (bi !== 0) {
    len /= Math.exp(at * bi);
    phase += bi * Math.log(vabs);
  }
  return new PyComplex(len * Math.cos(phase), len * Math.sin(phase));
}

/** Python arithmetic (`+ - * / **`) where one side is complex and the other a number; null otherwise. */
export function complexArith(op: string, a: unknown, b: unknown): PyComplex | null {
  if (!(a instanceof PyComplex) && !(b instanceof PyComplex)) return null;
  const c = (v: unknown): C | null =>
    v instanceof PyComplex
      ? [v.re, v.im]
      : isNumber(v) || typeof v === 'boolean'
        ? [typeof v === 'boolean' ? Number(v) : num(v as number), 0]
        : null;
  const x = c(a);
  const y = c(b);
  if (!x || !y) return null;
  switch (op) {
    case '+':
      return new PyComplex(x[0] + y[0], x[1] + y[1]);
    case '-':
      return new PyComplex(x[0] - y[0], x[1] - y[1]);
    case '*': {
      const [r, i] = cProd(x, y);
      return new PyComplex(r, i);
    }
    case '/':
      return complexQuot(x, y);
    case '**':
      return complexPow(x, y);
    default:
      return null;
  }
}
