import { SyntaxFailure } from '../errors';
import { mkInt, type PyBigInt, PyFloat } from '../values';

/**
 * YAQL lexer and parser. Grammar and operator table follow yaql 2.x (as configured by Mistral:
 * keyword operator `=>`, delegates off). Precedence, tightest first:
 * `.` `?.` › indexer `[]` › unary `+ -` › `=~ !~` › `* / mod` › `+ -` › comparisons and `in` ›
 * `not` › `and` › `or` › `->` (right associative).
 */

export type Tok =
  | { t: 'num'; v: number | PyFloat | PyBigInt; pos: number }
  | { t: 'str'; v: string; pos: number }
  | { t: 'const'; v: boolean | null; pos: number }
  | { t: 'kw'; v: string; pos: number }
  | { t: 'dollar'; v: string; pos: number }
  | { t: 'func'; v: string; pos: number }
  | { t: 'op'; v: string; pos: number }
  | { t: 'eof'; v: ''; pos: number };

export type Arg = { kind: 'pos'; node: Node } | { kind: 'named'; key: Node; value: Node };

export type Node =
  | { type: 'const'; value: unknown }
  | { type: 'keyword'; name: string }
  | { type: 'var'; name: string }
  | { type: 'call'; name: string; args: Arg[] }
  | { type: 'member'; left: Node; right: Node; nullSafe: boolean }
  | { type: 'index'; left: Node; args: Arg[] }
  | { type: 'list'; args: Arg[] }
  | { type: 'map'; args: Arg[] }
  | { type: 'binary'; op: string; left: Node; right: Node }
  | { type: 'unary'; op: string; operand: Node }
  | { type: 'wrap'; inner: Node };

const WORD_OPS = new Set(['and', 'or', 'not', 'in', 'mod']);
const SYMBOL_OPS = [
  '=>',
  '->',
  '?.',
  '=~',
  '!~',
  '!=',
  '>=',
  '<=',
  '.',
  '+',
  '-',
  '*',
  '/',
  '>',
  '<',
  '=',
  '[',
  ']',
  '{',
  '}',
  '(',
  ')',
  ',',
];
const IDENT = /[\p{L}_][\p{L}\p{N}_]*/uy;
const NUMBER = /\d+(\.?\d+)?/y;
const DOLLAR = /\$[\p{L}\p{N}_]*/uy;
const WORD_CHAR = /[\p{L}\p{N}_]/u;

const ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

/** Decodes Python-style escapes the way yaql does; unknown escapes stay verbatim. */
function decodeEscapes(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch !== '\\' || i + 1 >= raw.length) {
      out += ch;
      continue;
    }
    const n = raw[i + 1]!;
    const hex = (len: number): boolean => {
      const h = raw.slice(i + 2, i + 2 + len);
      if (h.length === len && /^[0-9a-fA-F]+$/.test(h)) {
        out += String.fromCodePoint(parseInt(h, 16));
        i += 1 + len;
        return true;
      }
      throw new SyntaxFailure(`truncated \\${n} escape`);
    };
    if (Object.prototype.hasOwnProperty.call(ESCAPES, n)) {
      out += ESCAPES[n];
      i++;
    } else if (n === 'x') hex(2);
    else if (n === 'u') hex(4);
    else if (n === 'U') hex(8);
    else if (/[0-7]/.test(n)) {
      const m = /^[0-7]{1,3}/.exec(raw.slice(i + 1))![0];
      out += String.fromCodePoint(parseInt(m, 8));
      i += m.length;
    } else {
      out += ch;
    }
  }
  return out;
}

export function tokenize(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  const isBoundaryBefore = (p: number) => p === 0 || !WORD_CHAR.test(src[p - 1]!);
  while (i < src.length) {
    const ch = src[i]!;
    if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n') {
      i++;
      continue;
    }
    if (ch === '$') {
      DOLLAR.lastIndex = i;
      const m = DOLLAR.exec(src)!;
      toks.push({ t: 'dollar', v: m[0].slice(1), pos: i });
      i += m[0].length;
      continue;
    }
    if (/\d/.test(ch) && isBoundaryBefore(i)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(src)!;
      let text = m[0];
      // A trailing word character breaks the \b boundary the reference requires.
      while (text.length > 0 && i + text.length < src.length && WORD_CHAR.test(src[i + text.length]!)) {
        text = text.slice(0, -1);
        if (text.endsWith('.')) text = text.slice(0, -1);
      }
      if (text.length === 0)
        throw new SyntaxFailure(`Lexical error: illegal character '${ch}' at position ${i}`, i);
      const v = text.includes('.') ? parseFloat(text) : parseInt(text, 10);
      // an integer literal is a Python int: exact at any size
      const value = text.includes('.')
        ? Number.isInteger(v)
          ? new PyFloat(v)
          : v
        : Number.isSafeInteger(v)
          ? v
          : mkInt(BigInt(text));
      toks.push({ t: 'num', v: value, pos: i });
      i += text.length;
      continue;
    }
    IDENT.lastIndex = i;
    const id = /[\p{L}_]/u.test(ch) ? IDENT.exec(src) : null;
    if (id) {
      const word = id[0];
      const end = i + word.length;
      if (src[end] === '(') {
        toks.push({ t: 'func', v: word, pos: i });
        i = end + 1;
        continue;
      }
      if (word.startsWith('__'))
        throw new SyntaxFailure(`Lexical error: illegal character '_' at position ${i}`, i);
      if (WORD_OPS.has(word)) toks.push({ t: 'op', v: word, pos: i });
      else if (word === 'true') toks.push({ t: 'const', v: true, pos: i });
      else if (word === 'false') toks.push({ t: 'const', v: false, pos: i });
      else if (word === 'null') toks.push({ t: 'const', v: null, pos: i });
      else toks.push({ t: 'kw', v: word, pos: i });
      i = end;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') {
      let j = i + 1;
      let raw = '';
      for (; j < src.length && src[j] !== ch; j++) {
        if (src[j] === '\\' && j + 1 < src.length) {
          raw += src[j]! + src[j + 1]!;
          j++;
        } else raw += src[j];
      }
      if (j >= src.length)
        throw new SyntaxFailure(`Lexical error: illegal character '${ch}' at position ${i}`, i);
      const v = ch === '`' ? raw.replace(/\\`/g, '`') : decodeEscapes(raw);
      toks.push({ t: 'str', v, pos: i });
      i = j + 1;
      continue;
    }
    const op = SYMBOL_OPS.find((o) => src.startsWith(o, i));
    if (op) {
      toks.push({ t: 'op', v: op, pos: i });
      i += op.length;
      continue;
    }
    throw new SyntaxFailure(`Lexical error: illegal character '${ch}' at position ${i}`, i);
  }
  toks.push({ t: 'eof', v: '', pos: src.length });
  return toks;
}

const BINARY_BP: Record<string, number> = {
  '.': 110,
  '?.': 110,
  '[': 100,
  '=~': 80,
  '!~': 80,
  '*': 70,
  '/': 70,
  mod: 70,
  '+': 60,
  '-': 60,
  '>': 50,
  '<': 50,
  '>=': 50,
  '<=': 50,
  '!=': 50,
  '=': 50,
  in: 50,
  and: 30,
  or: 20,
  '->': 10,
};
const UNARY_BP: Record<string, number> = { '+': 90, '-': 90, not: 40 };

class Parser {
  private i = 0;
  constructor(
    private readonly toks: Tok[],
    private readonly src: string,
  ) {}

  private peek(): Tok {
    return this.toks[this.i]!;
  }
  private next(): Tok {
    return this.toks[this.i++]!;
  }
  private error(tok: Tok): never {
    if (tok.t === 'eof') throw new SyntaxFailure('Parse error: unexpected end of statement', tok.pos);
    throw new SyntaxFailure(
      `Parse error: unexpected '${String(tok.v)}' at position ${tok.pos} of expression '${this.src}'`,
      tok.pos,
    );
  }
  private expectOp(v: string): void {
    const t = this.next();
    if (t.t !== 'op' || t.v !== v) this.error(t);
  }

  parseAll(): Node {
    if (this.peek().t === 'eof') throw new SyntaxFailure('Parse error: unexpected end of statement');
    const n = this.expr(0);
    if (this.peek().t !== 'eof') this.error(this.peek());
    return n;
  }

  private expr(rbp: number): Node {
    let left = this.nud(this.next());
    for (;;) {
      const t = this.peek();
      if (t.t !== 'op') break;
      const bp = BINARY_BP[t.v];
      if (bp === undefined || bp <= rbp) break;
      this.next();
      left = this.led(t.v, left, bp);
    }
    return left;
  }

  private nud(t: Tok): Node {
    switch (t.t) {
      case 'num':
      case 'str':
      case 'const':
        return { type: 'const', value: t.v };
      case 'kw':
        return { type: 'keyword', name: t.v };
      case 'dollar':
        return { type: 'var', name: t.v };
      case 'func':
        return { type: 'call', name: t.v, args: this.args(')') };
      case 'op': {
        if (t.v === '(') {
          const inner = this.expr(0);
          this.expectOp(')');
          return { type: 'wrap', inner };
        }
        if (t.v === '[') return { type: 'list', args: this.args(']') };
        if (t.v === '{') return { type: 'map', args: this.args('}') };
        const ubp = UNARY_BP[t.v];
        if (ubp !== undefined) return { type: 'unary', op: t.v, operand: this.expr(ubp) };
        return this.error(t);
      }
      case 'eof':
        return this.error(t);
    }
  }

  private led(op: string, left: Node, bp: number): Node {
    if (op === '.' || op === '?.') {
      return { type: 'member', left, right: this.expr(bp), nullSafe: op === '?.' };
    }
    if (op === '[') return { type: 'index', left, args: this.args(']') };
    if (op === '->') return { type: 'binary', op, left, right: this.expr(bp - 1) };
    return { type: 'binary', op, left, right: this.expr(bp) };
  }

  /** Comma separated arguments up to `close`; `key => value` pairs become named arguments. */
  private args(close: string): Arg[] {
    const out: Arg[] = [];
    const t0 = this.peek();
    if (t0.t === 'op' && t0.v === close) {
      this.next();
      return out;
    }
    // yaql's grammar refuses a positional argument after a keyword one at the token that follows it
    let misplaced = false;
    for (;;) {
      const node = this.expr(0);
      const t = this.peek();
      if (t.t === 'op' && t.v === '=>') {
        this.next();
        out.push({ kind: 'named', key: node, value: this.expr(0) });
      } else {
        if (out.some((a) => a.kind === 'named')) misplaced = true;
        out.push({ kind: 'pos', node });
      }
      const sep = this.next();
      if (misplaced) this.error(sep);
      if (sep.t === 'op' && sep.v === close) return out;
      if (sep.t !== 'op' || sep.v !== ',') this.error(sep);
    }
  }
}

/** Parses one YAQL expression; throws SyntaxFailure with a yaql-like message. */
export function parseYaql(src: string): Node {
  return new Parser(tokenize(src), src).parseAll();
}
