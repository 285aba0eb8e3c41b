import { fail } from './errors';
import { floatRepr, intRepr, LazySeq, PyDateTime, PyFloat, pyCompare, pyRepr, toArray } from './values';

/**
 * PyYAML's `yaml.dump(data, Dumper=SafeDumper, default_flow_style=False)` — what Mistral's
 * `yaml_dump` returns — reproduced from PyYAML 6's representer, resolver and emitter: YAML 1.1
 * implicit types decide when a string must be quoted (`'yes'`, `'010'`, `'12:30'`; `y`, `1e3` and
 * `-.5` stay plain), single quotes are preferred over double quotes, non-ASCII text is
 * double-quoted with `\x`/`\u` escapes (allow_unicode is off), long lines fold at 80 columns, keys
 * are sorted, and a document that is a plain scalar ends with `...`.
 */
export function pyYamlDump(data: unknown): string {
  const e = new Emitter();
  e.node(represent(data), { root: true });
  e.documentEnd();
  return e.out;
}

// ---------------------------------------------------------------------------------------------
// Representer (SafeRepresenter): value model → nodes

type Node =
  | { kind: 'scalar'; value: string; tag: 'str' | 'other' }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'map'; pairs: Array<[Node, Node]> };

function represent(v: unknown, depth = 0): Node {
  if (depth > 200) return fail('maximum recursion depth exceeded', 'RecursionError');
  if (v === null || v === undefined) return { kind: 'scalar', value: 'null', tag: 'other' };
  if (v === true || v === false) return { kind: 'scalar', value: v ? 'true' : 'false', tag: 'other' };
  if (typeof v === 'string') return { kind: 'scalar', value: v, tag: 'str' };
  if (typeof v === 'number' && Number.isInteger(v))
    return { kind: 'scalar', value: intRepr(v), tag: 'other' };
  if (typeof v === 'number' || v instanceof PyFloat) {
    const n = typeof v === 'number' ? v : v.value;
    let text: string;
    if (Number.isNaN(n)) text = '.nan';
    else if (n === Infinity) text = '.inf';
    else if (n === -Infinity) text = '-.inf';
    else {
      text = floatRepr(n).toLowerCase();
      if (!text.includes('.') && text.includes('e')) text = text.replace('e', '.0e');
    }
    return { kind: 'scalar', value: text, tag: 'other' };
  }
  if (v instanceof PyDateTime) {
    // SafeRepresenter.represent_datetime: isoformat(' ')
    const text = String(pyIso(v));
    return { kind: 'scalar', value: text, tag: 'other' };
  }
  if (Array.isArray(v)) return { kind: 'seq', items: v.map((x) => represent(x, depth + 1)) };
  // SafeRepresenter has no representer for iterators (yaql's queries)
  if (v instanceof LazySeq && v.once)
    fail(`('cannot represent an object', ${pyRepr(v)})`, 'RepresenterError');
  if (v instanceof LazySeq) return { kind: 'seq', items: toArray(v).map((x) => represent(x, depth + 1)) };
  if (v instanceof Map) {
    let keys = [...v.keys()];
    // represent_mapping: sorted(mapping) when every key compares, insertion order otherwise
    try {
      keys = [...keys].sort((a, b) => {
        if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
        return pyCompare(a, b);
      });
    } catch {
      keys = [...v.keys()];
    }
    return { kind: 'map', pairs: keys.map((k) => [represent(k, depth + 1), represent(v.get(k), depth + 1)]) };
  }
  return fail(`('cannot represent an object', ${pyRepr(v, true)})`, 'RepresenterError');
}

function pyIso(d: PyDateTime): string {
  const f = d.fields();
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const off = d.offsetMicros / 60_000_000;
  const sign = off < 0 ? '-' : '+';
  const us = f.microsecond ? `.${p(f.microsecond, 6)}` : '';
  return `${p(f.year, 4)}-${p(f.month)}-${p(f.day)} ${p(f.hour)}:${p(f.minute)}:${p(f.second)}${us}${sign}${p(Math.floor(Math.abs(off) / 60))}:${p(Math.abs(off) % 60)}`;
}

// ---------------------------------------------------------------------------------------------
// Resolver (YAML 1.1 implicit types, yaml/resolver.py): a string the resolver would read back as
// something else cannot be written plain.

const IMPLICIT: Array<[string, RegExp]> = [
  ['yYnNtTfFoO', /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)\n?$/],
  [
    '-+0123456789.',
    /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\n?$/,
  ],
  [
    '-+0123456789',
    /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)\n?$/,
  ],
  ['<', /^(?:<<)\n?$/],
  ['~nN', /^(?:~|null|Null|NULL|)\n?$/],
  [
    '0123456789',
    /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)\n?$/,
  ],
  ['=', /^(?:=)\n?$/],
  ['!&*', /^(?:!|&|\*)\n?$/],
];

/** Whether a plain scalar with this text resolves to a string (`implicit[0]` for a str node). */
function plainIsString(text: string): boolean {
  if (text === '') return false; // the null resolver's empty form
  const first = text[0]!;
  return !IMPLICIT.some(([firsts, re]) => firsts.includes(first) && re.test(text));
}

// ---------------------------------------------------------------------------------------------
// Emitter (yaml/emitter.py, block style, best_width 80, best_indent 2)

interface Analysis {
  empty: boolean;
  multiline: boolean;
  allowFlowPlain: boolean;
  allowBlockPlain: boolean;
  allowSingleQuoted: boolean;
  allowBlock: boolean;
}

const BREAKS = '\n\x85\u2028\u2029';
const WS_OR_END = '\0 \t\r\n\x85\u2028\u2029';

function analyze(scalar: string[]): Analysis {
  if (scalar.length === 0) {
    return {
      empty: true,
      multiline: false,
      allowFlowPlain: false,
      allowBlockPlain: true,
      allowSingleQuoted: true,
      allowBlock: false,
    };
  }
  let blockIndicators = false;
  let flowIndicators = false;
  let lineBreaks = false;
  let specialCharacters = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  const text = scalar.join('');
  if (text.startsWith('---') || text.startsWith('...')) {
    blockIndicators = true;
    flowIndicators = true;
  }
  let precededByWhitespace = true;
  let followedByWhitespace = scalar.length === 1 || WS_OR_END.includes(scalar[1]!);
  let previousSpace = false;
  let previousBreak = false;
  for (let index = 0; index < scalar.length; index++) {
    const ch = scalar[index]!;
    if (index === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) {
        flowIndicators = true;
        blockIndicators = true;
      }
      if (ch === '?' || ch === ':') {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      }
      if (ch === '-' && followedByWhitespace) {
        flowIndicators = true;
        blockIndicators = true;
      }
    } else {
      if (',?[]{}'.includes(ch)) flowIndicators = true;
      if (ch === ':') {
        flowIndicators = true;
        if (followedByWhitespace) blockIndicators = true;
      }
      if (ch === '#' && precededByWhitespace) {
        flowIndicators = true;
        blockIndicators = true;
      }
    }
    if (BREAKS.includes(ch)) lineBreaks = true;
    if (!(ch === '\n' || (ch >= '\x20' && ch <= '\x7E'))) specialCharacters = true; // allow_unicode is off
    if (ch === ' ') {
      if (index === 0) leadingSpace = true;
      if (index === scalar.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (BREAKS.includes(ch)) {
      if (index === 0) leadingBreak = true;
      if (index === scalar.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = WS_OR_END.includes(ch);
    followedByWhitespace = index + 2 >= scalar.length || WS_OR_END.includes(scalar[index + 2]!);
  }
  let allowFlowPlain = true;
  let allowBlockPlain = true;
  let allowSingleQuoted = true;
  let allowBlock = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak)
    allowFlowPlain = allowBlockPlain = false;
  if (trailingSpace) allowBlock = false;
  if (breakSpace) allowFlowPlain = allowBlockPlain = allowSingleQuoted = false;
  if (spaceBreak || specialCharacters)
    allowFlowPlain = allowBlockPlain = allowSingleQuoted = allowBlock = false;
  if (lineBreaks) allowFlowPlain = allowBlockPlain = false;
  if (flowIndicators) allowFlowPlain = false;
  if (blockIndicators) allowBlockPlain = false;
  return {
    empty: false,
    multiline: lineBreaks,
    allowFlowPlain,
    allowBlockPlain,
    allowSingleQuoted,
    allowBlock,
  };
}

const ESCAPES: Record<string, string> = {
  '\0': '0',
  '\x07': 'a',
  '\x08': 'b',
  '\x09': 't',
  '\x0A': 'n',
  '\x0B': 'v',
  '\x0C': 'f',
  '\x0D': 'r',
  '\x1B': 'e',
  '"': '"',
  '\\': '\\',
  '\x85': 'N',
  '\xA0': '_',
  '\u2028': 'L',
  '\u2029': 'P',
};

const BEST_WIDTH = 80;
const BEST_INDENT = 2;

interface NodeContext {
  root?: boolean;
  sequence?: boolean;
  mapping?: boolean;
  simpleKey?: boolean;
}

class Emitter {
  out = '';
  private column = 0;
  private whitespace = true;
  private indention = true;
  private openEnded = false;
  private indent: number | null = null;
  private readonly indents: Array<number | null> = [];
  private rootContext = false;
  private mappingContext = false;
  private simpleKeyContext = false;

  node(n: Node, c: NodeContext): void {
    this.rootContext = c.root === true;
    this.mappingContext = c.mapping === true;
    this.simpleKeyContext = c.simpleKey === true;
    if (n.kind === 'scalar') this.scalar(n);
    else if (n.kind === 'seq') {
      if (n.items.length === 0) this.emptyFlow('[', ']');
      else this.blockSequence(n.items);
    } else if (n.pairs.length === 0) this.emptyFlow('{', '}');
    else this.blockMapping(n.pairs);
  }

  documentEnd(): void {
    this.writeIndent();
    if (this.openEnded) {
      this.writeIndicator('...', true);
      this.writeIndent();
    }
  }

  private increaseIndent(flow: boolean, indentless = false): void {
    this.indents.push(this.indent);
    if (this.indent === null) this.indent = flow ? BEST_INDENT : 0;
    else if (!indentless) this.indent += BEST_INDENT;
  }

  private popIndent(): void {
    this.indent = this.indents.pop() ?? null;
  }

  private emptyFlow(open: string, close: string): void {
    this.writeIndicator(open, true, true);
    this.increaseIndent(true);
    this.popIndent();
    this.writeIndicator(close, false);
  }

  private blockSequence(items: Node[]): void {
    const indentless = this.mappingContext && !this.indention;
    this.increaseIndent(false, indentless);
    for (const item of items) {
      this.writeIndent();
      this.writeIndicator('-', true, false, true);
      this.node(item, { sequence: true });
    }
    this.popIndent();
  }

  private blockMapping(pairs: Array<[Node, Node]>): void {
    this.increaseIndent(false);
    for (const [key, value] of pairs) {
      this.writeIndent();
      if (this.isSimpleKey(key)) {
        this.node(key, { mapping: true, simpleKey: true });
        this.writeIndicator(':', false);
      } else {
        this.writeIndicator('?', true, false, true);
        this.node(key, { mapping: true });
        this.writeIndent();
        this.writeIndicator(':', true, false, true);
      }
      this.node(value, { mapping: true });
    }
    this.popIndent();
  }

  private isSimpleKey(key: Node): boolean {
    if (key.kind === 'seq') return key.items.length === 0;
    if (key.kind === 'map') return key.pairs.length === 0;
    const a = analyze([...key.value]);
    return [...key.value].length < 128 && !a.empty && !a.multiline;
  }

  private scalar(n: Extract<Node, { kind: 'scalar' }>): void {
    this.increaseIndent(true);
    const chars = [...n.value];
    const a = analyze(chars);
    const implicitPlain = n.tag === 'other' || plainIsString(n.value);
    let style: '' | "'" | '"' = '"';
    if (
      implicitPlain &&
      !(this.simpleKeyContext && (a.empty || a.multiline)) &&
      a.allowBlockPlain // flow_level is always 0: collections with items are written in block style
    ) {
      style = '';
    } else if (a.allowSingleQuoted && !(this.simpleKeyContext && a.multiline)) {
      style = "'";
    }
    const split = !this.simpleKeyContext;
    if (style === '') this.writePlain(chars, split);
    else if (style === "'") this.writeSingleQuoted(chars, split);
    else this.writeDoubleQuoted(chars, split);
    this.popIndent();
  }

  private write(data: string): void {
    this.out += data;
  }

  private writeIndicator(
    indicator: string,
    needWhitespace: boolean,
    whitespace = false,
    indention = false,
  ): void {
    const data = this.whitespace || !needWhitespace ? indicator : ` ${indicator}`;
    this.whitespace = whitespace;
    this.indention = this.indention && indention;
    this.column += data.length;
    this.openEnded = false;
    this.write(data);
  }

  private writeIndent(): void {
    const indent = this.indent ?? 0;
    if (!this.indention || this.column > indent || (this.column === indent && !this.whitespace))
      this.writeLineBreak();
    if (this.column < indent) {
      this.whitespace = true;
      this.write(' '.repeat(indent - this.column));
      this.column = indent;
    }
  }

  private writeLineBreak(data = '\n'): void {
    this.whitespace = true;
    this.indention = true;
    this.column = 0;
    this.write(data);
  }

  private writePlain(text: string[], split: boolean): void {
    if (this.rootContext) this.openEnded = true;
    if (text.length === 0) return;
    if (!this.whitespace) {
      this.column += 1;
      this.write(' ');
    }
    this.whitespace = false;
    this.indention = false;
    let spaces = false;
    let start = 0;
    for (let end = 0; end <= text.length; end++) {
      const ch = end < text.length ? text[end]! : null;
      if (spaces) {
        if (ch !== ' ') {
          if (start + 1 === end && this.column > BEST_WIDTH && split) {
            this.writeIndent();
            this.whitespace = false;
            this.indention = false;
          } else {
            this.column += end - start;
            this.write(text.slice(start, end).join(''));
          }
          start = end;
        }
      } else if (ch === null || ch === ' ' || BREAKS.includes(ch)) {
        this.column += end - start;
        this.write(text.slice(start, end).join(''));
        start = end;
      }
      if (ch !== null) spaces = ch === ' ';
    }
  }

  private writeSingleQuoted(text: string[], split: boolean): void {
    this.writeIndicator("'", true);
    let spaces = false;
    let breaks = false;
    let start = 0;
    for (let end = 0; end <= text.length; end++) {
      const ch = end < text.length ? text[end]! : null;
      if (spaces) {
        if (ch === null || ch !== ' ') {
          if (start + 1 === end && this.column > BEST_WIDTH && split && start !== 0 && end !== text.length) {
            this.writeIndent();
          } else {
            this.column += end - start;
            this.write(text.slice(start, end).join(''));
          }
          start = end;
        }
      } else if (breaks) {
        if (ch === null || !BREAKS.includes(ch)) {
          if (text[start] === '\n') this.writeLineBreak();
          for (const br of text.slice(start, end)) {
            if (br === '\n') this.writeLineBreak();
            else this.writeLineBreak(br);
          }
          this.writeIndent();
          start = end;
        }
      } else if (ch === null || ch === ' ' || BREAKS.includes(ch) || ch === "'") {
        if (start < end) {
          this.column += end - start;
          this.write(text.slice(start, end).join(''));
          start = end;
        }
      }
      if (ch === "'") {
        this.column += 2;
        this.write("''");
        start = end + 1;
      }
      if (ch !== null) {
        spaces = ch === ' ';
        breaks = BREAKS.includes(ch);
      }
    }
    this.writeIndicator("'", false);
  }

  private writeDoubleQuoted(text: string[], split: boolean): void {
    this.writeIndicator('"', true);
    let start = 0;
    for (let end = 0; end <= text.length; end++) {
      const ch = end < text.length ? text[end]! : null;
      if (ch === null || '"\\\x85\u2028\u2029\uFEFF'.includes(ch) || !(ch >= '\x20' && ch <= '\x7E')) {
        if (start < end) {
          this.column += end - start;
          this.write(text.slice(start, end).join(''));
          start = end;
        }
        if (ch !== null) {
          const code = ch.codePointAt(0)!;
          let data: string;
          if (ch in ESCAPES) data = `\\${ESCAPES[ch]}`;
          else if (code <= 0xff) data = `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`;
          else if (code <= 0xffff) data = `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
          else data = `\\U${code.toString(16).toUpperCase().padStart(8, '0')}`;
          this.column += data.length;
          this.write(data);
          start = end + 1;
        }
      }
      if (
        end > 0 &&
        end < text.length - 1 &&
        (ch === ' ' || start >= end) &&
        this.column + (end - start) > BEST_WIDTH &&
        split
      ) {
        const data = `${text.slice(start, end).join('')}\\`;
        if (start < end) start = end;
        this.column += data.length;
        this.write(data);
        this.writeIndent();
        this.whitespace = false;
        this.indention = false;
        if (text[start] === ' ') {
          this.column += 1;
          this.write('\\');
        }
      }
    }
    this.writeIndicator('"', false);
  }
}
