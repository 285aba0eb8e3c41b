import { fail } from '../errors';
import { isTuple, pyCompare, pyRepr, strRepr } from '../values';

/**
 * Jinja2 3.1 filters and globals that are whole algorithms of Python's standard library or of
 * jinja2.utils: urlize, wordwrap (textwrap), pprint (pprint.pformat) and lipsum.
 */

const htmlEscape = (s: string): string =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&#34;')
    .replace(/'/g, '&#39;');

// ---------------------------------------------------------------------------------------------
// urlize (jinja2.utils.urlize)

const W = '\\p{L}\\p{N}_';
const HTTP_RE = new RegExp(
  '^(' +
    '(https?://|www\\.)(([' +
    W +
    '%-]+\\.)+)?([a-z]{2,63}|xn--[' +
    W +
    '%]{2,59})' +
    '|([' +
    W +
    '%-]{2,63}\\.)+(com|net|int|edu|gov|org|info|mil)' +
    '|(https?://)((([\\d]{1,3})(\\.[\\d]{1,3}){3})|(\\[([\\da-f]{0,4}:){2}([\\da-f]{0,4}:?){1,6}\\]))' +
    ')(?::[\\d]{1,5})?(?:[/?#]\\S*)?$',
  'iu',
);
const EMAIL_RE = new RegExp('^\\S+@[' + W + '][' + W + '.-]*\\.[' + W + ']+$', 'u');
const URI_SCHEME_RE = new RegExp('^([' + W + '.+-]{2,}:(/){0,2})$', 'u');

const count = (s: string, sub: string): number => s.split(sub).length - 1;

export interface UrlizeOptions {
  trimUrlLimit: number | null;
  rel: string | null;
  target: string | null;
  extraSchemes: string[];
}

export function urlize(text: string, o: UrlizeOptions): string {
  for (const scheme of o.extraSchemes) {
    if (!URI_SCHEME_RE.test(scheme))
      fail(`${strRepr(scheme)} is not a valid URI scheme prefix.`, 'FilterArgumentError');
  }
  const trim = (x: string): string =>
    o.trimUrlLimit !== null && [...x].length > o.trimUrlLimit
      ? `${[...x].slice(0, Math.max(0, o.trimUrlLimit)).join('')}...`
      : x;
  const words = htmlEscape(text).split(/(\s+)/u);
  const relAttr = o.rel ? ` rel="${htmlEscape(o.rel)}"` : '';
  const targetAttr = o.target ? ` target="${htmlEscape(o.target)}"` : '';
  return words
    .map((word) => {
      let head = '';
      let middle = word;
      let tail = '';
      const lead = /^([(<]|&lt;)+/.exec(middle);
      if (lead) {
        head = lead[0];
        middle = middle.slice(lead[0].length);
      }
      if ([')', '>', '.', ',', '\n', '&gt;'].some((e) => middle.endsWith(e))) {
        const trail = /([)>.,\n]|&gt;)+$/.exec(middle);
        if (trail) {
          tail = trail[0];
          middle = middle.slice(0, trail.index);
        }
      }
      for (const [startChar, endChar] of [
        ['(', ')'],
        ['<', '>'],
        ['&lt;', '&gt;'],
      ] as const) {
        const startCount = count(middle, startChar);
        if (startCount <= count(middle, endChar)) continue;
        const moves = Math.min(startCount, count(tail, endChar));
        for (let i = 0; i < moves; i++) {
          const endIndex = tail.indexOf(endChar) + endChar.length;
          middle += tail.slice(0, endIndex);
          tail = tail.slice(endIndex);
        }
      }
      if (HTTP_RE.test(middle)) {
        const href =
          middle.startsWith('https://') || middle.startsWith('http://') ? middle : `https://${middle}`;
        middle = `<a href="${href}"${relAttr}${targetAttr}>${trim(middle)}</a>`;
      } else if (middle.startsWith('mailto:') && EMAIL_RE.test(middle.slice(7))) {
        middle = `<a href="${middle}">${middle.slice(7)}</a>`;
      } else if (
        middle.includes('@') &&
        !middle.startsWith('www.') &&
        !middle.includes(':') &&
        EMAIL_RE.test(middle)
      ) {
        middle = `<a href="mailto:${middle}">${middle}</a>`;
      } else {
        for (const scheme of o.extraSchemes) {
          if (middle !== scheme && middle.startsWith(scheme))
            middle = `<a href="${middle}"${relAttr}${targetAttr}>${middle}</a>`;
        }
      }
      return `${head}${middle}${tail}`;
    })
    .join('');
}

// ---------------------------------------------------------------------------------------------
// wordwrap (textwrap.wrap with expand_tabs=False, replace_whitespace=False)

const WS = '[\\t\\n\\x0b\\x0c\\r ]';
const NWS = '[^\\t\\n\\x0b\\x0c\\r ]';
const LT = '[\\p{L}_]';
const WP = '[' + W + '!"\'&.,?]';
const WORDSEP = new RegExp(
  `(${WS}+|(?<=${WP})-{2,}(?=[${W}])|${NWS}+?(?:-(?:(?<=${LT}{2}-)|(?<=${LT}-${LT}-))(?=${LT}-?${LT})|(?=${WS}|(?![\\s\\S]))|(?<=${WP})(?=-{2,}[${W}])))`,
  'u',
);
const WORDSEP_SIMPLE = new RegExp(`(${WS}+)`, 'u');
const pyLen = (s: string): number => [...s].length;
const isBlank = (s: string): boolean => /^[\s]*$/u.test(s);

function textwrap(text: string, width: number, breakLongWords: boolean, breakOnHyphens: boolean): string[] {
  if (width <= 0) fail(`invalid width ${width} (must be > 0)`, 'ValueError');
  const chunks = text
    .split(breakOnHyphens ? WORDSEP : WORDSEP_SIMPLE)
    .filter((c) => c !== undefined && c !== '');
  chunks.reverse();
  const lines: string[] = [];
  while (chunks.length > 0) {
    const cur: string[] = [];
    let curLen = 0;
    if (isBlank(chunks[chunks.length - 1]!) && lines.length > 0) chunks.pop();
    while (chunks.length > 0) {
      const l = pyLen(chunks[chunks.length - 1]!);
      if (curLen + l > width) break;
      cur.push(chunks.pop()!);
      curLen += l;
    }
    if (chunks.length > 0 && pyLen(chunks[chunks.length - 1]!) > width) {
      const spaceLeft = width < 1 ? 1 : width - curLen;
      if (breakLongWords) {
        let end = spaceLeft;
        const chunk = [...chunks[chunks.length - 1]!];
        if (breakOnHyphens && chunk.length > spaceLeft) {
          const hyphen = chunk.slice(0, spaceLeft).lastIndexOf('-');
          if (hyphen > 0 && chunk.slice(0, hyphen).some((c) => c !== '-')) end = hyphen + 1;
        }
        cur.push(chunk.slice(0, end).join(''));
        chunks[chunks.length - 1] = chunk.slice(end).join('');
      } else if (cur.length === 0) {
        cur.push(chunks.pop()!);
      }
    }
    if (cur.length > 0 && isBlank(cur[cur.length - 1]!)) cur.pop();
    if (cur.length > 0) lines.push(cur.join(''));
  }
  return lines;
}

/** Python str.splitlines(). */
function splitLines(s: string): string[] {
  // eslint-disable-next-line no-control-regex -- Python's line boundaries include \x0b, \x0c, \x1c-\x1e
  const parts = s.split(/\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/u);
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

export function wordwrap(
  s: string,
  width: number,
  breakLongWords: boolean,
  wrapstring: string,
  breakOnHyphens: boolean,
): string {
  return splitLines(s)
    .map((line) => textwrap(line, width, breakLongWords, breakOnHyphens).join(wrapstring))
    .join(wrapstring);
}

// ---------------------------------------------------------------------------------------------
// pprint (pprint.pformat: width 80, indent 1, sort_dicts)

function sortedEntries(m: Map<unknown, unknown>): Array<[unknown, unknown]> {
  const entries = [...m.entries()];
  try {
    return [...entries].sort((a, b) => pyCompare(a[0], b[0]));
  } catch {
    return entries;
  }
}

function safeRepr(v: unknown): string {
  if (v instanceof Map)
    return `{${sortedEntries(v)
      .map(([k, x]) => `${safeRepr(k)}: ${safeRepr(x)}`)
      .join(', ')}}`;
  if (Array.isArray(v)) {
    const inner = v.map(safeRepr);
    if (!isTuple(v)) return `[${inner.join(', ')}]`;
    return inner.length === 1 ? `(${inner[0]},)` : `(${inner.join(', ')})`;
  }
  return pyRepr(v);
}

const WIDTH = 80;

function format(v: unknown, out: string[], indent: number, allowance: number, level: number): void {
  const rep = safeRepr(v);
  if (pyLen(rep) <= WIDTH - indent - allowance) {
    out.push(rep);
    return;
  }
  if (v instanceof Map && v.size > 0) {
    out.push('{');
    const items = sortedEntries(v);
    const inner = indent + 1;
    items.forEach(([k, x], i) => {
      const last = i === items.length - 1;
      const krep = safeRepr(k);
      out.push(krep, ': ');
      format(x, out, inner + pyLen(krep) + 2, last ? allowance + 1 : 1, level + 1);
      if (!last) out.push(`,\n${' '.repeat(inner)}`);
    });
    out.push('}');
    return;
  }
  if (Array.isArray(v) && v.length > 0) {
    const tuple = isTuple(v);
    const end = tuple ? (v.length === 1 ? ',)' : ')') : ']';
    out.push(tuple ? '(' : '[');
    v.forEach((x, i) => {
      const last = i === v.length - 1;
      if (i > 0) out.push(`,\n${' '.repeat(indent + 1)}`);
      format(x, out, indent + 1, last ? allowance + end.length : 1, level + 1);
    });
    out.push(end);
    return;
  }
  if (typeof v === 'string' && v.length > 0) {
    out.push(formatString(v, indent, allowance, level + 1));
    return;
  }
  out.push(rep);
}

function formatString(s: string, indent0: number, allowance0: number, level: number): string {
  let indent = indent0;
  let allowance = allowance0;
  const lines =
    s.match(
      // eslint-disable-next-line no-control-regex -- str.splitlines(True): Python's line boundaries
      /[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029])|[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+$/gu,
    ) ?? [];
  if (level === 1) {
    indent += 1;
    allowance += 1;
  }
  const chunks: string[] = [];
  let maxWidth1 = WIDTH - indent;
  const maxWidth = WIDTH - indent;
  let rep = '';
  lines.forEach((line, i) => {
    rep = strRepr(line);
    if (i === lines.length - 1) maxWidth1 -= allowance;
    if (pyLen(rep) <= maxWidth1) {
      chunks.push(rep);
      return;
    }
    const parts = line.match(/\S*\s*/gu) ?? [];
    parts.pop();
    let maxWidth2 = maxWidth;
    let current = '';
    parts.forEach((part, j) => {
      const candidate = current + part;
      if (j === parts.length - 1 && i === lines.length - 1) maxWidth2 -= allowance;
      if (pyLen(strRepr(candidate)) > maxWidth2) {
        if (current) chunks.push(strRepr(current));
        current = part;
      } else current = candidate;
    });
    if (current) chunks.push(strRepr(current));
  });
  if (chunks.length === 1) return rep;
  const body = chunks.join(`\n${' '.repeat(indent)}`);
  return level === 1 ? `(${body})` : body;
}

export function pformat(v: unknown): string {
  const out: string[] = [];
  format(v, out, 0, 0, 0);
  return out.join('');
}

// ---------------------------------------------------------------------------------------------
// lipsum (jinja2.utils.generate_lorem_ipsum)

const LOREM_IPSUM_WORDS = (
  'a ac accumsan ad adipiscing aenean aliquam aliquet amet ante aptent arcu at auctor augue bibendum ' +
  'blandit class commodo condimentum congue consectetuer consequat conubia convallis cras cubilia cum ' +
  'curabitur curae cursus dapibus diam dictum dictumst dignissim dis dolor donec dui duis egestas eget ' +
  'eleifend elementum elit enim erat eros est et etiam eu euismod facilisi facilisis fames faucibus ' +
  'felis fermentum feugiat fringilla fusce gravida habitant habitasse hac hendrerit hymenaeos iaculis ' +
  'id imperdiet in inceptos integer interdum ipsum justo lacinia lacus laoreet lectus leo libero ' +
  'ligula litora lobortis lorem luctus maecenas magna magnis malesuada massa mattis mauris metus mi ' +
  'molestie mollis montes morbi mus nam nascetur natoque nec neque netus nibh nisi nisl non nonummy ' +
  'nostra nulla nullam nunc odio orci ornare parturient pede pellentesque penatibus per pharetra ' +
  'phasellus placerat platea porta porttitor posuere potenti praesent pretium primis proin pulvinar ' +
  'purus quam quis quisque rhoncus ridiculus risus rutrum sagittis sapien scelerisque sed sem semper ' +
  'senectus sit sociis sociosqu sodales sollicitudin suscipit suspendisse taciti tellus tempor tempus ' +
  'tincidunt torquent tortor tristique turpis ullamcorper ultrices ultricies urna ut varius vehicula ' +
  'vel velit venenatis vestibulum vitae vivamus viverra volutpat vulputate ' +
  ''
)
  .split(' ')
  .filter((w) => w !== '');

export function lipsum(n: number, html: boolean, min: number, max: number, random: () => number): string {
  const randrange = (a: number, b: number): number => {
    if (b <= a) fail(`empty range for randrange() (${a}, ${b}, ${b - a})`, 'ValueError');
    return a + Math.floor(random() * (b - a));
  };
  const result: string[] = [];
  for (let i = 0; i < n; i++) {
    let nextCapitalized = true;
    let lastComma = 0;
    let lastFullstop = 0;
    let last: string | null = null;
    const p: string[] = [];
    const count = randrange(min, max);
    for (let idx = 0; idx < count; idx++) {
      let word: string;
      do word = LOREM_IPSUM_WORDS[Math.floor(random() * LOREM_IPSUM_WORDS.length)]!;
      while (word === last);
      last = word;
      if (nextCapitalized) {
        word = word.charAt(0).toUpperCase() + word.slice(1);
        nextCapitalized = false;
      }
      if (idx - randrange(3, 8) > lastComma) {
        lastComma = idx;
        lastFullstop += 2;
        word += ',';
      }
      if (idx - randrange(10, 20) > lastFullstop) {
        lastComma = lastFullstop = idx;
        word += '.';
        nextCapitalized = true;
      }
      p.push(word);
    }
    let text = p.join(' ');
    if (text.endsWith(',')) text = `${text.slice(0, -1)}.`;
    else if (!text.endsWith('.')) text += '.';
    result.push(text);
  }
  return html ? result.map((x) => `<p>${htmlEscape(x)}</p>`).join('\n') : result.join('\n\n');
}
