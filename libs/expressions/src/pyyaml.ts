import { fail } from './errors';
import {
  floatRepr,
  intRepr,
  LazySeq,
  PyBigInt,
  PyDate,
  PyDateTime,
  PyFloat,
  dateTimeStr,
  pyCompare,
  pyRepr,
  toArray,
} from './values';

/**
 * The text of Mistral's `yaml_dump` (PyYAML 6's `yaml.dump(data, Dumper=SafeDumper,
 * default_flow_style=False)`), written from the reference's observed output (the fixtures in
 * `test/golden/yaml-dump.json`, made by `tools/gen-yaml-dump.py`), not from its code.
 *
 * The design is two steps: {@link toNode} turns a value into a tree of scalars, sequences and
 * mappings (sorting mapping keys when Python could sort them), then a {@link Printer} lays the tree
 * out as block YAML with a running column, so that long scalars can fold at 80 columns.
 *
 * Rules followed (all observed):
 * - a mapping entry is `key: value`; a nested mapping goes two columns deeper on the next line, a
 *   nested sequence starts on the next line at the key's own column; a sequence item is `- item`
 *   with a nested collection continuing on the same line; empty collections are `[]` and `{}`;
 * - a key that is a collection, an empty or multi-line string, or longer than 122 characters is
 *   written as `? key` / `: value`;
 * - a string is plain when that is safe ({@link isPlainSafe}) and it does not read back as another
 *   YAML 1.1 type ({@link readsAsOtherType}); otherwise single-quoted when it has only printable
 *   ASCII and line feeds, none of them next to a space; otherwise double-quoted with escapes
 *   (non-ASCII is always escaped: the reference runs without allow_unicode);
 * - a document that is a plain scalar ends with `...`.
 */
export function pyYamlDump(data: unknown): string {
  const root = toNode(data);
  const printer = new Printer();
  if (root.kind === 'scalar') {
    const plain = printer.scalar(root, 2, true);
    return `${printer.text}\n${plain ? '...\n' : ''}`;
  }
  if (isEmpty(root)) return root.kind === 'sequence' ? '[]\n' : '{}\n';
  printer.collection(root, 0);
  return `${printer.text}\n`;
}

/** A string scalar is chosen a style; other scalars (numbers, booleans, null, times) are plain. */
type YamlNode =
  | { kind: 'scalar'; text: string; isString: boolean }
  | { kind: 'sequence'; items: YamlNode[] }
  | { kind: 'mapping'; entries: Array<[YamlNode, YamlNode]> };
type ScalarNode = Extract<YamlNode, { kind: 'scalar' }>;

const WIDTH = 80;
/** Longest key (in characters) the reference still writes as `key: value`. */
const SIMPLE_KEY_MAX = 122;

function refuse(value: unknown): never {
  return fail(`('cannot represent an object', ${pyRepr(value, true)})`, 'RepresenterError');
}

function floatText(n: number): string {
  if (Number.isNaN(n)) return '.nan';
  if (n === Infinity) return '.inf';
  if (n === -Infinity) return '-.inf';
  const repr = floatRepr(n);
  // an exponent form without a dot gets one, so that the text reads back as a float
  return repr.includes('e') && !repr.includes('.') ? repr.replace('e', '.0e') : repr;
}

function toNode(value: unknown): YamlNode {
  const scalar = (text: string, isString = false): YamlNode => ({ kind: 'scalar', text, isString });
  if (value === null || value === undefined) return scalar('null');
  if (typeof value === 'boolean') return scalar(value ? 'true' : 'false');
  if (typeof value === 'string') return scalar(value, true);
  if (typeof value === 'number') return scalar(Number.isInteger(value) ? intRepr(value) : floatText(value));
  if (value instanceof PyFloat) return scalar(floatText(value.value));
  if (value instanceof PyBigInt) return scalar(value.value.toString());
  if (value instanceof PyDateTime) return scalar(dateTimeStr(value, ' '));
  if (value instanceof PyDate) return scalar(value.toString());
  if (Array.isArray(value)) return { kind: 'sequence', items: value.map(toNode) };
  // a re-iterable sequence is a list to Python; a one-shot iterator is an object SafeDumper refuses
  if (value instanceof LazySeq && !value.once) return { kind: 'sequence', items: toArray(value).map(toNode) };
  if (value instanceof Map) {
    const keys = [...value.keys()];
    let ordered = keys;
    try {
      ordered = [...keys].sort((a, b) => pyCompare(a, b));
    } catch {
      // keys Python cannot order (None, or str beside int) keep their insertion order
    }
    return { kind: 'mapping', entries: ordered.map((k) => [toNode(k), toNode(value.get(k))]) };
  }
  return refuse(value);
}

// ---------------------------------------------------------------------------------------------
// Which style a string takes

const BOOL_WORDS = new Set(['yes', 'no', 'true', 'false', 'on', 'off']);
const NULL_WORDS = new Set(['~', 'null', 'Null', 'NULL', '']);

/** A YAML 1.1 boolean as the reference reads one: three casings of six words (`y`/`n` are strings). */
function isBoolWord(s: string): boolean {
  const lower = s.toLowerCase();
  return (
    BOOL_WORDS.has(lower) &&
    (s === lower || s === lower.toUpperCase() || s === lower[0]!.toUpperCase() + lower.slice(1))
  );
}

/** yaml.org/type/int.html: binary, octal, decimal, hexadecimal and base 60 (`1:30`). */
const INT_FORMS = [
  /^[-+]?0b[01_]+$/,
  /^[-+]?0[0-7_]+$/,
  /^[-+]?(?:0|[1-9][0-9_]*)$/,
  /^[-+]?0x[0-9a-fA-F_]+$/,
  /^[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+$/,
];

/**
 * yaml.org/type/float.html, narrowed to what the reference reads as a float: digits before the
 * dot when signed (`-.5` stays a string, `.5` does not), a digit right after a bare dot (`._5`
 * stays a string), an exponent only with its sign.
 */
const FLOAT_FORMS = [
  /^[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?$/,
  /^\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?$/,
  /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*$/,
  /^[-+]?\.(?:inf|Inf|INF)$/,
  /^\.(?:nan|NaN|NAN)$/,
];

/** yaml.org/type/timestamp.html: a date, or a date and time with optional fraction and zone. */
const TIMESTAMP_FORMS = [
  /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/,
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?$/,
];

/** Whether the text, written plain, would read back as something other than a string. */
function readsAsOtherType(s: string): boolean {
  return (
    NULL_WORDS.has(s) ||
    isBoolWord(s) ||
    s === '<<' || // yaml.org/type/merge.html
    s === '=' || // yaml.org/type/value.html
    INT_FORMS.some((re) => re.test(s)) ||
    FLOAT_FORMS.some((re) => re.test(s)) ||
    TIMESTAMP_FORMS.some((re) => re.test(s))
  );
}

const isPrintableAscii = (ch: string): boolean => ch >= ' ' && ch <= '~';
/** Characters that cannot open a plain scalar at all. */
const NEVER_FIRST = new Set([...'#,[]{}&*!|>\'"%@`']);
/** Characters that cannot open a plain scalar when a space or the end follows them. */
const NOT_FIRST_BEFORE_SPACE = new Set(['-', '?', ':']);

/** Whether the string may be written without quotes (its implicit type is checked apart). */
function isPlainSafe(s: string): boolean {
  if (s === '' || ![...s].every(isPrintableAscii)) return false;
  if (s.startsWith(' ') || s.endsWith(' ')) return false;
  if (s.startsWith('---') || s.startsWith('...')) return false;
  const first = s[0]!;
  if (NEVER_FIRST.has(first)) return false;
  if (NOT_FIRST_BEFORE_SPACE.has(first) && (s.length === 1 || s[1] === ' ')) return false;
  return !s.includes(': ') && !s.includes(' #') && !s.endsWith(':');
}

/** Single quotes carry printable ASCII and line feeds, as long as no line feed touches a space. */
function isSingleQuoteSafe(s: string): boolean {
  return (
    [...s].every((ch) => ch === '\n' || isPrintableAscii(ch)) && !s.includes(' \n') && !s.includes('\n ')
  );
}

type Style = 'plain' | 'single' | 'double';

function styleOf(node: { text: string; isString: boolean }): Style {
  if (!node.isString) return 'plain';
  if (isPlainSafe(node.text) && !readsAsOtherType(node.text)) return 'plain';
  return isSingleQuoteSafe(node.text) ? 'single' : 'double';
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\0': '0',
  '\x07': 'a',
  '\b': 'b',
  '\t': 't',
  '\n': 'n',
  '\v': 'v',
  '\f': 'f',
  '\r': 'r',
  '\x1b': 'e',
  '"': '"',
  '\\': '\\',
  '\x85': 'N',
  '\xa0': '_',
  '\u2028': 'L',
  '\u2029': 'P',
};

/** The escape for a character double quotes cannot hold as it is, or null when it can. */
function escapeOf(ch: string): string | null {
  const short = SHORT_ESCAPES[ch];
  if (short !== undefined) return `\\${short}`;
  if (isPrintableAscii(ch)) return null;
  const cp = ch.codePointAt(0)!;
  const hex = cp.toString(16).toUpperCase();
  if (cp < 0x100) return `\\x${hex.padStart(2, '0')}`;
  if (cp < 0x10000) return `\\u${hex.padStart(4, '0')}`;
  return `\\U${hex.padStart(8, '0')}`;
}

/** A key stays on its entry's line when it is a short one-line scalar. */
function isSimpleKey(key: YamlNode): key is ScalarNode {
  if (key.kind !== 'scalar') return false;
  if (key.isString && (key.text === '' || /[\n\x85\u2028\u2029]/.test(key.text))) return false;
  return [...key.text].length <= SIMPLE_KEY_MAX;
}

// ---------------------------------------------------------------------------------------------
// Layout

/** Accumulates the output and knows the column the next character lands in. */
class Printer {
  text = '';
  column = 0;

  write(s: string): void {
    this.text += s;
    this.column += s.length;
  }

  /** Ends the line and starts the next one at `indent`. */
  newLine(indent: number): void {
    this.text += `\n${' '.repeat(indent)}`;
    this.column = indent;
  }

  /** Writes a non-empty collection whose first entry starts at the cursor, the others at `indent`. */
  collection(node: Exclude<YamlNode, { kind: 'scalar' }>, indent: number): void {
    let first = true;
    const nextEntry = () => {
      if (!first) this.newLine(indent);
      first = false;
    };
    if (node.kind === 'sequence') {
      for (const item of node.items) {
        nextEntry();
        this.write('- ');
        this.inline(item, indent + 2);
      }
      return;
    }
    for (const [key, value] of node.entries) {
      nextEntry();
      if (!isSimpleKey(key)) {
        this.write('? ');
        this.inline(key, indent + 2);
        this.newLine(indent);
        this.write(': ');
        this.inline(value, indent + 2);
        continue;
      }
      this.scalar(key, indent + 2, false);
      this.write(':');
      if (value.kind === 'scalar' || isEmpty(value)) {
        this.write(' ');
        this.inline(value, indent + 2);
      } else if (value.kind === 'mapping') {
        this.newLine(indent + 2);
        this.collection(value, indent + 2);
      } else {
        this.newLine(indent);
        this.collection(value, indent);
      }
    }
  }

  /** Writes a node after `- `, `? ` or `: `: a collection continues on this line at `indent`. */
  private inline(node: YamlNode, indent: number): void {
    if (node.kind === 'scalar') this.scalar(node, indent, true);
    else if (isEmpty(node)) this.write(node.kind === 'sequence' ? '[]' : '{}');
    else this.collection(node, indent);
  }

  /**
   * Writes a scalar in its style; `indent` is where folded lines continue, `fold` whether the
   * scalar may take more than one line (a key may not). Returns whether it was written plain.
   */
  scalar(node: ScalarNode, indent: number, fold: boolean): boolean {
    const style = styleOf(node);
    const chars = [...node.text];
    if (style === 'double') {
      this.doubleQuoted(chars, indent, fold);
      return false;
    }
    const quoted = style === 'single';
    if (quoted) this.write("'");
    const last = chars.length - 1;
    for (let i = 0; i <= last; i++) {
      const ch = chars[i]!;
      if (ch === '\n') {
        // a run of n line feeds is n + 1 line ends in single quotes, then the indentation
        let run = 1;
        while (chars[i + run] === '\n') run++;
        this.text += '\n'.repeat(run + 1) + ' '.repeat(indent);
        this.column = indent;
        i += run - 1;
        continue;
      }
      const lone = ch === ' ' && i > 0 && i < last && chars[i - 1] !== ' ' && chars[i + 1] !== ' ';
      if (lone && fold && this.column > WIDTH) this.newLine(indent);
      else this.write(ch === "'" && quoted ? "''" : ch);
    }
    if (quoted) this.write("'");
    return !quoted;
  }

  /**
   * Double quotes fold with an escaped line end (`\`); the fold may fall on a space (written `\ `
   * on the new line so it is kept) once past 80 columns, or right after an escape once past 81
   * columns, or before the text that follows an escape once past 80; never at either end.
   */
  private doubleQuoted(chars: string[], indent: number, fold: boolean): void {
    this.write('"');
    const last = chars.length - 1;
    const breakLine = (spaceNext: boolean) => {
      this.write('\\');
      this.newLine(indent);
      if (spaceNext) this.write('\\');
    };
    let afterEscape = false;
    for (let i = 0; i <= last; i++) {
      const ch = chars[i]!;
      const inside = fold && i > 0 && i < last;
      const escape = escapeOf(ch);
      if (escape !== null) {
        this.write(escape);
        afterEscape = true;
        if (inside && this.column > WIDTH + 1) breakLine(chars[i + 1] === ' ');
        continue;
      }
      if (inside && (ch === ' ' || afterEscape) && this.column > WIDTH) breakLine(ch === ' ');
      afterEscape = false;
      this.write(ch);
    }
    this.write('"');
  }
}

const isEmpty = (node: YamlNode): boolean =>
  (node.kind === 'sequence' && node.items.length === 0) ||
  (node.kind === 'mapping' && node.entries.length === 0);
