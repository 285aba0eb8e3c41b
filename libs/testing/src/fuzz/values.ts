import type { Rng } from './rng';

/**
 * Odd values for fuzz cases: strings, numbers, JSON values of the wrong type, deep nesting, path
 * segments, query values and header values. Everything is cheap to make (no shrinking, no search):
 * a case costs a few microseconds to generate so thousands fit in a CI run.
 */

const SHORT_TOKENS = [
  '',
  ' ',
  '\u0000',
  '\t',
  '\n',
  '\r\n',
  '"',
  "'",
  '\\',
  '%',
  '%00',
  '%zz',
  '{',
  '}',
  '[',
  ']',
  '<%',
  '%>',
  '{{',
  '}}',
  '$',
  '*',
  '?',
  '&',
  '#',
  '/',
  '..',
  '../..',
  ':',
  ';',
  ',',
  '=',
  'null',
  'None',
  'true',
  'False',
  'NaN',
  'Infinity',
  '-1',
  '0',
  '1e999',
  '0x10',
  '9223372036854775808',
  '-9223372036854775809',
  '1.5',
  'asc',
  'desc',
  'admin',
  '__proto__',
  'constructor',
  "' OR '1'='1",
  '1; DROP TABLE volumes',
  '<script>alert(1)</script>',
  '\u00e9',
  '\u00ff',
  '\u0130',
  '\u202e',
  '\ufeff',
  '\ufffd',
  '\ud800',
  '\udc00',
  '\u{1f600}',
  '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}',
  '\u4e2d\u6587',
  '\u0627\u0644\u0639\u0631\u0628\u064a\u0629',
  'ä',
  '0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffffx',
  '{0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f}',
  '2016-12-01 15:01:00',
  '2016-13-45T25:61:61Z',
  '0000-00-00',
  'gt:2020-01-01',
  'lt:nope',
  'in:a,b',
  'eq:',
  'neq:\u0000',
  'has:x',
];

/** A character repeated or a random mix of nasty pieces, of up to `max` characters (UTF-16 units). */
export function oddString(rng: Rng, max = 300): string {
  switch (rng.int(0, 6)) {
    case 0:
      return rng.pick(SHORT_TOKENS);
    case 1:
      return rng
        .pick(['x', 'é', '\u{1f600}', '\u0000', ' ', 'a-', '%', '\\'])
        .repeat(rng.int(1, Math.max(1, max >> 1)));
    case 2: {
      let s = '';
      const n = rng.int(1, 8);
      for (let i = 0; i < n; i++) s += rng.pick(SHORT_TOKENS);
      return s.slice(0, max);
    }
    case 3: {
      let s = '';
      const n = rng.int(0, Math.min(max, 64));
      for (let i = 0; i < n; i++)
        s += String.fromCharCode(rng.chance(0.8) ? rng.int(0x20, 0x7e) : rng.int(0, 0xffff));
      return s;
    }
    case 4:
      return `name-${rng.int(0, 1e9)}`;
    case 5:
      return 'n'.repeat(
        rng.pick([255, 256, 257, 1000, 1001, 4097, 65536].filter((n) => n <= Math.max(max, 255))),
      );
    default:
      return rng.pick([
        'a',
        'ab',
        'name',
        'k',
        'v',
        'std.echo',
        'nova',
        'lvm',
        'default',
        'available',
        'error',
        'RUNNING',
        'SUCCESS',
      ]);
  }
}

const NUMBERS = [
  0,
  -0,
  1,
  -1,
  2,
  3,
  0.5,
  -0.5,
  1.0000001,
  255,
  256,
  65536,
  2147483647,
  2147483648,
  -2147483649,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e21,
  1e308,
  -1e308,
  5e-324,
];

export function oddNumber(rng: Rng): number {
  return rng.chance(0.7) ? rng.pick(NUMBERS) : rng.int(-1e6, 1e6) / rng.pick([1, 1, 7, 1000]);
}

/** An array or object nested `depth` levels deep (deep enough to overflow naive recursion or a database's nesting limit). */
export function deepNesting(rng: Rng, depth: number): unknown {
  const kind = rng.int(0, 2);
  let v: unknown = rng.pick([1, 'x', null, true, {}]);
  for (let i = 0; i < depth; i++) {
    v = kind === 0 ? [v] : kind === 1 ? { a: v } : i % 2 ? [v] : { [oddString(rng, 8)]: v };
  }
  return v;
}

/**
 * JSON text nested `depth` levels deep, built as text (JSON.stringify itself overflows the stack on
 * a few thousand levels): arrays, objects or both, optionally as the value of `key` in an object.
 */
export function deepJsonText(rng: Rng, depth: number, key?: string): string {
  const kind = rng.int(0, 2);
  const open = kind === 0 ? '[' : kind === 1 ? '{"a":' : '{"a":[';
  const close = kind === 0 ? ']' : kind === 1 ? '}' : ']}';
  const levels = kind === 2 ? depth >> 1 : depth;
  const inner = `${open.repeat(levels)}${rng.pick(['1', '"x"', 'null', '{}'])}${close.repeat(levels)}`;
  return key === undefined ? inner : `{${JSON.stringify(key)}:${inner}}`;
}

/** A JSON value of any type: scalars of odd kinds, small containers, sometimes huge or deeply nested. */
export function oddJson(rng: Rng, depth = 0): unknown {
  const choice = rng.weighted<number>([
    [4, 0],
    [3, 1],
    [2, 2],
    [2, 3],
    [1, 4],
    [depth < 3 ? 2 : 0, 5],
    [depth < 3 ? 2 : 0, 6],
    [depth === 0 ? 0.3 : 0, 7],
    [depth === 0 ? 0.3 : 0, 8],
  ]);
  switch (choice) {
    case 0:
      return oddString(rng);
    case 1:
      return oddNumber(rng);
    case 2:
      return rng.pick([true, false]);
    case 3:
      return null;
    case 4:
      return rng.pick(['', '0', '1', 'true', '[]', '{}', 'null']);
    case 5: {
      const n = rng.int(0, 4);
      return Array.from({ length: n }, () => oddJson(rng, depth + 1));
    }
    case 6: {
      const o: Record<string, unknown> = {};
      const n = rng.int(0, 4);
      for (let i = 0; i < n; i++) o[oddString(rng, 40)] = oddJson(rng, depth + 1);
      return o;
    }
    case 7:
      return deepNesting(rng, rng.pick([64, 200, 1000]));
    default:
      return oddString(rng, 1).repeat(rng.pick([5000, 20000]));
  }
}

type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The paths (lists of keys) to every value inside `doc`, the root included. */
function pathsOf(
  doc: Json,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  out.push(prefix);
  if (out.length > 200) return out;
  if (Array.isArray(doc)) doc.forEach((v, i) => pathsOf(v, [...prefix, i], out));
  else if (isObject(doc)) for (const [k, v] of Object.entries(doc)) pathsOf(v, [...prefix, k], out);
  return out;
}

function setAt(doc: Json, path: (string | number)[], value: Json | undefined): Json {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string | number, ...(string | number)[]];
  if (Array.isArray(doc)) {
    const copy = [...doc];
    if (value === undefined && rest.length === 0) copy.splice(Number(head), 1);
    else copy[Number(head)] = setAt(copy[Number(head)], rest, value);
    return copy;
  }
  if (isObject(doc)) {
    const copy = { ...doc };
    if (value === undefined && rest.length === 0) delete copy[head];
    else copy[head] = setAt(copy[head], rest, value);
    return copy;
  }
  return doc;
}

/**
 * A valid-looking body with one to three edits: a value replaced by one of another type, by a huge
 * or unicode string, a key dropped, an unknown key added, or a container wrapped in a list.
 */
export function mutateJson(rng: Rng, seed: Json): Json {
  let doc = seed;
  const edits = rng.int(1, 3);
  for (let e = 0; e < edits; e++) {
    const paths = pathsOf(doc);
    const at = rng.pick(paths.length > 1 && rng.chance(0.85) ? paths.slice(1) : paths);
    switch (rng.int(0, 6)) {
      case 0:
      case 1:
      case 2:
        doc = setAt(doc, at, oddJson(rng, 1));
        break;
      case 3:
        doc = at.length ? setAt(doc, at, undefined) : doc;
        break;
      case 4: {
        const parent = at.slice(0, -1);
        doc = setAt(doc, [...parent, oddString(rng, 40)], oddJson(rng, 1));
        break;
      }
      case 5:
        doc = setAt(doc, at, oddString(rng, 1).repeat(rng.pick([256, 1000, 10000, 40000])));
        break;
      default:
        doc = setAt(
          doc,
          at,
          rng.chance(0.5) ? [rng.chance(0.5) ? doc : null] : { [oddString(rng, 12)]: oddJson(rng, 2) },
        );
        break;
    }
  }
  return doc;
}

/** Body text that is not quite JSON (or is JSON of an odd kind at the top). */
export function oddJsonText(rng: Rng, seed: Json): string {
  const text = JSON.stringify(seed) ?? 'null';
  switch (rng.int(0, 9)) {
    case 0:
      return text.slice(0, rng.int(0, text.length));
    case 1:
      return `\ufeff${text}`;
    case 2:
      return text.replace(/"/g, "'");
    case 3:
      return `${text}${rng.pick(['}', ']', ',', ' x', '\u0000', '{}'])}`;
    case 4:
      return rng.pick([
        '',
        ' ',
        'null',
        '[]',
        '0',
        '"x"',
        'true',
        '{}',
        '{"__proto__": {"admin": true}}',
        '{"constructor": {"prototype": {"x": 1}}}',
      ]);
    case 5:
      return text.replace(
        /\d+/,
        rng.pick(['1e999', '-1e999', '00', '0x1F', 'NaN', '1_000', '9999999999999999999999999999']),
      );
    case 6: {
      // the same key twice: JSON.parse keeps the last
      const inner = text.startsWith('{') ? text.slice(1, -1) : '"a":1';
      return `{${inner}${inner ? ',' : ''}${inner}}`;
    }
    case 7:
      return `${'['.repeat(rng.pick([100, 1000, 10000]))}1${']'.repeat(rng.pick([100, 1000, 10000]))}`;
    case 8:
      return oddString(rng, 200);
    default:
      return `{"a":"\\ud800","b":"\\u0000","c":"${'\\n'.repeat(10)}"}`;
  }
}

/** One path segment that is not what the route expects, already percent-encoded (or deliberately not). */
export function oddPathSegment(rng: Rng): string {
  switch (rng.int(0, 5)) {
    case 0:
      return rng.pick([
        '%zz',
        '%',
        '%E0%A4%A',
        '%c0%af',
        '%00',
        '%2F',
        '%2e%2e',
        '..',
        '.',
        '%20',
        '%u0041',
        '%ff%fe',
        ';x',
        'x;y=z',
        '%3F',
        '%23',
        '+',
      ]);
    case 1:
      return 'n'.repeat(rng.pick([256, 999, 1000, 1001, 2000]));
    case 2: {
      const hex = '0123456789abcdef';
      let u = '';
      for (let i = 0; i < 32; i++) u += hex[rng.int(0, 15)];
      const uuid = `${u.slice(0, 8)}-${u.slice(8, 12)}-4${u.slice(13, 16)}-8${u.slice(17, 20)}-${u.slice(20)}`;
      return rng.pick([
        uuid,
        uuid.toUpperCase(),
        uuid.replace(/-/g, ''),
        uuid.slice(1),
        `${uuid}0`,
        `{${uuid}}`,
        uuid.replace(/[a-f]/, 'g'),
      ]);
    }
    default:
      return encodeURIComponent(oddString(rng, 300).replace(/[\ud800-\udfff]/g, '\ufffd'));
  }
}

/** A query value (already percent-encoded), sometimes with broken encoding. */
export function oddQueryValue(rng: Rng): string {
  if (rng.chance(0.1)) return rng.pick(['%zz', '%', '%E0%A4%A', '%00', '%ff', '+', '%2B', '&', '=']);
  const raw = rng.chance(0.5) ? oddString(rng, 200) : (JSON.stringify(oddJson(rng, 2)) ?? 'null');
  return encodeURIComponent(raw.replace(/[\ud800-\udfff]/g, '\ufffd'));
}

/** A header value Node can send (latin-1, no CR/LF/NUL), of up to a few KiB. */
export function oddHeaderValue(rng: Rng): string {
  const s = rng.chance(0.15) ? 'h'.repeat(rng.pick([1000, 4000, 7000])) : oddString(rng, 200);
  return Array.from(s)
    .map((ch) => {
      const c = ch.codePointAt(0) ?? 32;
      return c === 9 || (c >= 0x20 && c <= 0x7e) || (c >= 0x80 && c <= 0xff) ? ch : '?';
    })
    .join('');
}
