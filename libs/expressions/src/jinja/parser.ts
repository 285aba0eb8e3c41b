import { SyntaxFailure } from '../errors';
import { mkInt, type PyBigInt, PyFloat } from '../values';

/**
 * Jinja2 lexer and parser for the subset Mistral workflows use: full expression syntax (literals,
 * tuples, lists, dicts, attribute/subscript/slice access, calls with keyword arguments, filters,
 * tests, conditional expressions, Python operators) and the statements `if`/`elif`/`else`, `for`
 * (with `else`, an `if` filter and tuple targets), `set`, `raw`, comments, whitespace control `-`,
 * with Mistral's `trim_blocks` and `lstrip_blocks` settings.
 */

export type JTok =
  | { t: 'name'; v: string }
  | { t: 'str'; v: string }
  | { t: 'int'; v: number | PyBigInt }
  | { t: 'float'; v: number | PyFloat }
  | { t: 'op'; v: string }
  | { t: 'end' };

export type JNode =
  | { type: 'const'; value: unknown }
  | { type: 'name'; name: string }
  | { type: 'tuple'; items: JNode[] }
  | { type: 'list'; items: JNode[] }
  | { type: 'dict'; items: Array<[JNode, JNode]> }
  | { type: 'getattr'; obj: JNode; name: string }
  | { type: 'getitem'; obj: JNode; key: JNode }
  | { type: 'slice'; obj: JNode; start: JNode | null; stop: JNode | null; step: JNode | null }
  | { type: 'call'; fn: JNode; args: JNode[]; kwargs: Array<[string, JNode]> }
  | { type: 'filter'; value: JNode; name: string; args: JNode[]; kwargs: Array<[string, JNode]> }
  | {
      type: 'test';
      value: JNode;
      name: string;
      args: JNode[];
      kwargs: Array<[string, JNode]>;
      negate: boolean;
    }
  | { type: 'binop'; op: string; left: JNode; right: JNode }
  | { type: 'unop'; op: string; operand: JNode }
  | { type: 'compare'; first: JNode; ops: Array<[string, JNode]> }
  | { type: 'and' | 'or'; left: JNode; right: JNode }
  | { type: 'concat'; items: JNode[] }
  | { type: 'cond'; test: JNode; then: JNode; else: JNode | null };

export type Stmt =
  | { type: 'text'; text: string }
  | { type: 'output'; expr: JNode }
  | { type: 'if'; branches: Array<[JNode, Stmt[]]>; else: Stmt[] }
  | { type: 'for'; target: string[]; iter: JNode; filter: JNode | null; body: Stmt[]; else: Stmt[] }
  | { type: 'set'; target: string[]; value: JNode };

const OPS = [
  '//',
  '**',
  '==',
  '!=',
  '<=',
  '>=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '~',
  '<',
  '>',
  '=',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  '.',
  ':',
  '|',
  ';',
];
const ESC: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
};

/** Tokenizes expression source starting at `pos` until `closer` (`}}` or `%}`) at token level. */
function lexExpr(
  src: string,
  pos: number,
  closer: string | null,
): { toks: JTok[]; starts: number[]; end: number; stripAfter: boolean; keepNewline?: boolean } {
  const toks: JTok[] = [];
  /** Where each token starts in `src` (for the position of a syntax error). */
  const starts: number[] = [];
  let i = pos;
  const push = (tok: JTok, at: number) => {
    toks.push(tok);
    starts.push(at);
  };
  for (;;) {
    while (i < src.length && /\s/.test(src[i]!)) i++;
    if (closer !== null) {
      if (src.startsWith(`-${closer}`, i))
        return {
          toks: [...toks, { t: 'end' }],
          starts: [...starts, i],
          end: i + 1 + closer.length,
          stripAfter: true,
        };
      // `+%}` keeps the newline that trim_blocks would remove.
      if (closer === '%}' && src.startsWith('+%}', i))
        return {
          toks: [...toks, { t: 'end' }],
          starts: [...starts, i],
          end: i + 3,
          stripAfter: false,
          keepNewline: true,
        };
      if (src.startsWith(closer, i))
        return {
          toks: [...toks, { t: 'end' }],
          starts: [...starts, i],
          end: i + closer.length,
          stripAfter: false,
        };
    }
    if (i >= src.length) {
      if (closer !== null)
        throw new SyntaxFailure(
          `unexpected end of template, expected '${closer === '}}' ? 'end of print statement' : 'end of statement block'}'`,
          i,
        );
      return { toks: [...toks, { t: 'end' }], starts: [...starts, i], end: i, stripAfter: false };
    }
    const ch = src[i]!;
    const rest = src.slice(i);
    const num = /^(\d[\d_]*)(\.\d[\d_]*)?([eE][+-]?\d[\d_]*)?/.exec(rest);
    if (num) {
      const text = num[0].replace(/_/g, '');
      if (num[2] || num[3]) {
        const v = parseFloat(text);
        push({ t: 'float', v: Number.isInteger(v) ? new PyFloat(v) : v }, i);
      } else
        push(
          {
            t: 'int',
            v: Number.isSafeInteger(parseInt(text, 10)) ? parseInt(text, 10) : mkInt(BigInt(text)),
          },
          i,
        );
      i += num[0].length;
      continue;
    }
    const name = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(rest);
    if (name) {
      push({ t: 'name', v: name[0] }, i);
      i += name[0].length;
      continue;
    }
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      let out = '';
      while (j < src.length && src[j] !== ch) {
        if (src[j] === '\\' && j + 1 < src.length) {
          const e = src[j + 1]!;
          if (Object.prototype.hasOwnProperty.call(ESC, e)) out += ESC[e];
          else if (e === 'x' || e === 'u' || e === 'U') {
            const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
            const hex = src.slice(j + 2, j + 2 + len);
            if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len)
              throw new SyntaxFailure('truncated escape sequence');
            out += String.fromCodePoint(parseInt(hex, 16));
            j += len;
          } else if (e === '\n') out += '';
          else out += `\\${e}`;
          j += 2;
        } else out += src[j++];
      }
      if (j >= src.length) throw new SyntaxFailure("unexpected char '" + ch + "' at " + i, i);
      push({ t: 'str', v: out }, i);
      i = j + 1;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (op) {
      push({ t: 'op', v: op }, i);
      i += op.length;
      continue;
    }
    throw new SyntaxFailure(`unexpected char '${ch}' at ${i}`, i);
  }
}

const describe = (t: JTok): string => (t.t === 'end' ? 'end of statement' : `'${String(t.v)}'`);

class ExprParser {
  i = 0;
  /** Index of the token looked at last (peeked or taken): where a syntax error is reported. */
  seen = 0;
  constructor(readonly toks: JTok[]) {}

  peek(k = 0): JTok {
    if (k === 0) this.seen = Math.min(this.i, this.toks.length - 1);
    return this.toks[Math.min(this.i + k, this.toks.length - 1)]!;
  }
  next(): JTok {
    this.seen = Math.min(this.i, this.toks.length - 1);
    return this.toks[Math.min(this.i++, this.toks.length - 1)]!;
  }
  isOp(v: string, k = 0): boolean {
    const t = this.peek(k);
    return t.t === 'op' && t.v === v;
  }
  isName(v: string, k = 0): boolean {
    const t = this.peek(k);
    return t.t === 'name' && t.v === v;
  }
  expectOp(v: string): void {
    const t = this.next();
    if (t.t !== 'op' || t.v !== v) throw new SyntaxFailure(`expected token '${v}', got ${describe(t)}`);
  }
  expectName(): string {
    const t = this.next();
    if (t.t !== 'name') throw new SyntaxFailure(`expected name, got ${describe(t)}`);
    return t.v;
  }
  atEnd(): boolean {
    return this.peek().t === 'end';
  }

  /** An expression, or an implicit tuple `a, b` when `tuples` is set. */
  parseTuple(tuples = true, withCond = true): JNode {
    const first = this.parseExpression(withCond);
    if (!tuples || !this.isOp(',')) return first;
    const items = [first];
    while (this.isOp(',')) {
      this.next();
      if (this.atEnd() || this.isOp(')') || this.isName('in') || this.isOp('=')) break;
      items.push(this.parseExpression());
    }
    return { type: 'tuple', items };
  }

  parseExpression(withCond = true): JNode {
    const expr = this.parseOr();
    if (withCond && this.isName('if')) {
      this.next();
      const test = this.parseOr();
      let other: JNode | null = null;
      if (this.isName('else')) {
        this.next();
        other = this.parseExpression();
      }
      return { type: 'cond', test, then: expr, else: other };
    }
    return expr;
  }

  parseOr(): JNode {
    let left = this.parseAnd();
    while (this.isName('or')) {
      this.next();
      left = { type: 'or', left, right: this.parseAnd() };
    }
    return left;
  }
  parseAnd(): JNode {
    let left = this.parseNot();
    while (this.isName('and')) {
      this.next();
      left = { type: 'and', left, right: this.parseNot() };
    }
    return left;
  }
  parseNot(): JNode {
    if (this.isName('not')) {
      this.next();
      return { type: 'unop', op: 'not', operand: this.parseNot() };
    }
    return this.parseCompare();
  }
  parseCompare(): JNode {
    const first = this.parseMath1();
    const ops: Array<[string, JNode]> = [];
    for (;;) {
      const t = this.peek();
      if (t.t === 'op' && ['==', '!=', '<', '>', '<=', '>='].includes(t.v)) {
        this.next();
        ops.push([t.v, this.parseMath1()]);
      } else if (this.isName('in')) {
        this.next();
        ops.push(['in', this.parseMath1()]);
      } else if (this.isName('not') && this.isName('in', 1)) {
        this.next();
        this.next();
        ops.push(['notin', this.parseMath1()]);
      } else break;
    }
    return ops.length === 0 ? first : { type: 'compare', first, ops };
  }
  parseMath1(): JNode {
    let left = this.parseConcat();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.next() as { v: string }).v;
      left = { type: 'binop', op, left, right: this.parseConcat() };
    }
    return left;
  }
  parseConcat(): JNode {
    const items = [this.parseMath2()];
    while (this.isOp('~')) {
      this.next();
      items.push(this.parseMath2());
    }
    return items.length === 1 ? items[0]! : { type: 'concat', items };
  }
  parseMath2(): JNode {
    let left = this.parsePow();
    while (this.isOp('*') || this.isOp('/') || this.isOp('//') || this.isOp('%')) {
      const op = (this.next() as { v: string }).v;
      left = { type: 'binop', op, left, right: this.parsePow() };
    }
    return left;
  }
  parsePow(): JNode {
    let left = this.parseUnary();
    while (this.isOp('**')) {
      this.next();
      left = { type: 'binop', op: '**', left, right: this.parseUnary() };
    }
    return left;
  }
  parseUnary(withFilter = true): JNode {
    let node: JNode;
    if (this.isOp('-') || this.isOp('+')) {
      const op = (this.next() as { v: string }).v;
      node = { type: 'unop', op, operand: this.parseUnary(false) };
    } else node = this.parsePrimary();
    node = this.parsePostfix(node);
    if (withFilter) node = this.parseFilterExpr(node);
    return node;
  }
  parsePrimary(): JNode {
    const t = this.next();
    switch (t.t) {
      case 'name':
        if (t.v === 'true' || t.v === 'True') return { type: 'const', value: true };
        if (t.v === 'false' || t.v === 'False') return { type: 'const', value: false };
        if (t.v === 'none' || t.v === 'None') return { type: 'const', value: null };
        return { type: 'name', name: t.v };
      case 'str': {
        let s = t.v;
        while (this.peek().t === 'str') s += (this.next() as { v: string }).v;
        return { type: 'const', value: s };
      }
      case 'int':
      case 'float':
        return { type: 'const', value: t.v };
      case 'op':
        if (t.v === '(') {
          if (this.isOp(')')) {
            this.next();
            return { type: 'tuple', items: [] };
          }
          const inner = this.parseTuple(true);
          this.expectOp(')');
          return inner;
        }
        if (t.v === '[') {
          const items: JNode[] = [];
          while (!this.isOp(']')) {
            if (items.length > 0) this.expectOp(',');
            if (this.isOp(']')) break;
            items.push(this.parseExpression());
          }
          this.expectOp(']');
          return { type: 'list', items };
        }
        if (t.v === '{') {
          const items: Array<[JNode, JNode]> = [];
          while (!this.isOp('}')) {
            if (items.length > 0) this.expectOp(',');
            if (this.isOp('}')) break;
            const k = this.parseExpression();
            this.expectOp(':');
            items.push([k, this.parseExpression()]);
          }
          this.expectOp('}');
          return { type: 'dict', items };
        }
        throw new SyntaxFailure(`unexpected '${t.v}'`);
      case 'end':
        throw new SyntaxFailure("Expected an expression, got 'end of print statement'");
    }
  }
  parsePostfix(node: JNode): JNode {
    for (;;) {
      if (this.isOp('.')) {
        this.next();
        const t = this.next();
        if (t.t === 'name') node = { type: 'getattr', obj: node, name: t.v };
        else if (t.t === 'int') node = { type: 'getitem', obj: node, key: { type: 'const', value: t.v } };
        else throw new SyntaxFailure(`expected name or number, got ${describe(t)}`);
      } else if (this.isOp('[')) {
        this.next();
        node = this.parseSubscript(node);
      } else if (this.isOp('(')) {
        this.next();
        const { args, kwargs } = this.parseCallArgs();
        node = { type: 'call', fn: node, args, kwargs };
      } else return node;
    }
  }
  parseSubscript(obj: JNode): JNode {
    const part = (): JNode | null => (this.isOp(':') || this.isOp(']') ? null : this.parseExpression());
    const start = part();
    if (!this.isOp(':')) {
      if (start === null) throw new SyntaxFailure('expected subscript expression');
      if (this.isOp(',')) {
        // `x[1, 2]` subscripts with the tuple (1, 2), as in Python.
        const items = [start];
        while (this.isOp(',')) {
          this.next();
          if (this.isOp(']')) break;
          items.push(this.parseExpression());
        }
        this.expectOp(']');
        return { type: 'getitem', obj, key: { type: 'tuple', items } };
      }
      this.expectOp(']');
      return { type: 'getitem', obj, key: start };
    }
    this.next();
    const stop = part();
    let step: JNode | null = null;
    if (this.isOp(':')) {
      this.next();
      step = part();
    }
    this.expectOp(']');
    return { type: 'slice', obj, start, stop, step };
  }
  parseCallArgs(): { args: JNode[]; kwargs: Array<[string, JNode]> } {
    const args: JNode[] = [];
    const kwargs: Array<[string, JNode]> = [];
    while (!this.isOp(')')) {
      if (args.length + kwargs.length > 0) this.expectOp(',');
      if (this.isOp(')')) break;
      if (this.peek().t === 'name' && this.isOp('=', 1)) {
        const k = this.expectName();
        this.next();
        kwargs.push([k, this.parseExpression()]);
      } else {
        if (kwargs.length > 0) throw new SyntaxFailure('invalid syntax for function call expression');
        args.push(this.parseExpression());
      }
    }
    this.expectOp(')');
    return { args, kwargs };
  }
  parseFilterExpr(node: JNode): JNode {
    for (;;) {
      if (this.isOp('|')) {
        this.next();
        let name = this.expectName();
        while (this.isOp('.')) {
          this.next();
          name += `.${this.expectName()}`;
        }
        let args: JNode[] = [];
        let kwargs: Array<[string, JNode]> = [];
        if (this.isOp('(')) {
          this.next();
          ({ args, kwargs } = this.parseCallArgs());
        }
        node = { type: 'filter', value: node, name, args, kwargs };
      } else if (this.isName('is')) {
        this.next();
        let negate = false;
        if (this.isName('not')) {
          this.next();
          negate = true;
        }
        const t = this.next();
        let name: string;
        // the operator tests (`==`, `<`, ...) exist for select()/reject() only: after `is` Jinja2's
        // parser wants a name
        if (t.t === 'name') name = t.v;
        else throw new SyntaxFailure(`expected token 'name', got ${describe(t)}`);
        let args: JNode[] = [];
        let kwargs: Array<[string, JNode]> = [];
        if (this.isOp('(')) {
          this.next();
          ({ args, kwargs } = this.parseCallArgs());
        } else {
          const p = this.peek();
          // Jinja2 takes any following primary as the test's single argument (even a name like
          // `if`), except `else`/`or`/`and`; a second `is` is refused.
          const startsPrimary =
            p.t === 'str' ||
            p.t === 'int' ||
            p.t === 'float' ||
            (p.t === 'op' && (p.v === '(' || p.v === '[' || p.v === '{')) ||
            (p.t === 'name' && !['else', 'or', 'and'].includes(p.v));
          if (startsPrimary) {
            if (p.t === 'name' && p.v === 'is')
              throw new SyntaxFailure('You cannot chain multiple tests with is');
            args = [this.parsePostfix(this.parsePrimary())];
          }
        }
        node = { type: 'test', value: node, name, args, kwargs, negate };
      } else if (this.isOp('(')) {
        this.next();
        const { args, kwargs } = this.parseCallArgs();
        node = { type: 'call', fn: node, args, kwargs };
      } else return node;
    }
  }
}

/** Parses a standalone expression (the inside of `{{ }}`). */
export function parseJinjaExpression(src: string): JNode {
  const { toks, starts } = lexExpr(src, 0, null);
  const p = new ExprParser(toks);
  try {
    const node = p.parseTuple(true);
    if (!p.atEnd())
      throw new SyntaxFailure(`expected token 'end of print statement', got ${describe(p.peek())}`);
    return node;
  } catch (e) {
    // the parser's failures name the token it looked at last: give them its place
    if (e instanceof SyntaxFailure && e.position === undefined)
      throw new SyntaxFailure(e.message, starts[p.seen]);
    throw e;
  }
}

interface RawTag {
  kind: 'text' | 'output' | 'block';
  text?: string;
  toks?: JTok[];
}

/** Splits a template into text, `{{ }}` and `{% %}` parts, applying whitespace control. */
function lexTemplate(source: string): RawTag[] {
  // keep_trailing_newline is off: one trailing newline is dropped.
  const src = source.endsWith('\n') ? source.slice(0, -1) : source;
  const out: RawTag[] = [];
  let i = 0;
  let text = '';
  let stripNextLeading = false;
  let trimNewline = false;
  const pushText = (s: string) => {
    text += s;
  };
  const flush = (rstrip: boolean, lstripLine: boolean, tagPos = -1) => {
    let t = text;
    if (rstrip) t = t.replace(/\s+$/, '');
    else if (lstripLine && tagPos >= 0) {
      // lstrip_blocks: whitespace from the start of the line up to a block tag is dropped.
      let j = tagPos;
      while (j > 0 && (src[j - 1] === ' ' || src[j - 1] === '\t')) j--;
      const run = tagPos - j;
      if (run > 0 && (j === 0 || src[j - 1] === '\n') && run <= t.length) t = t.slice(0, t.length - run);
    }
    if (t.length > 0) out.push({ kind: 'text', text: t });
    text = '';
  };
  while (i < src.length) {
    const open = /\{\{|\{%|\{#/g;
    open.lastIndex = i;
    const m = open.exec(src);
    let chunk = m ? src.slice(i, m.index) : src.slice(i);
    if (stripNextLeading) chunk = chunk.replace(/^\s+/, '');
    if (trimNewline) chunk = chunk.replace(/^\n/, '');
    stripNextLeading = false;
    trimNewline = false;
    pushText(chunk);
    if (!m) break;
    const tag = m[0];
    let p = m.index + 2;
    const minus = src[p] === '-';
    const plus = src[p] === '+';
    if (minus || plus) p++;
    if (tag === '{#') {
      const end = src.indexOf('#}', p);
      if (end < 0) throw new SyntaxFailure('Missing end of comment tag');
      const stripAfter = src[end - 1] === '-';
      flush(minus, !plus, m.index);
      i = end + 2;
      stripNextLeading = stripAfter;
      trimNewline = !stripAfter;
      continue;
    }
    if (tag === '{{') {
      flush(minus, false);
      const { toks, end, stripAfter } = lexExpr(src, p, '}}');
      out.push({ kind: 'output', toks });
      i = end;
      stripNextLeading = stripAfter;
      continue;
    }
    // block tag
    flush(minus, !plus, m.index);
    const raw = /^\s*raw\s*(-?)%\}/.exec(src.slice(p));
    if (raw) {
      const endRe = /\{%(-?)\s*endraw\s*(-?)%\}/g;
      endRe.lastIndex = p;
      const em = endRe.exec(src);
      if (!em)
        throw new SyntaxFailure(
          "Unexpected end of template. Jinja was looking for the following tags: 'endraw'.",
        );
      let body = src.slice(p + raw[0].length, em.index);
      if (raw[1] === '-') body = body.replace(/^\s+/, '');
      else body = body.replace(/^\n/, '');
      if (em[1] === '-') body = body.replace(/\s+$/, '');
      else body = body.replace(/(^|\n)[ \t]+$/, '$1');
      if (body.length > 0) out.push({ kind: 'text', text: body });
      i = em.index + em[0].length;
      stripNextLeading = em[2] === '-';
      trimNewline = em[2] !== '-';
      continue;
    }
    const { toks, end, stripAfter, keepNewline } = lexExpr(src, p, '%}');
    out.push({ kind: 'block', toks });
    i = end;
    stripNextLeading = stripAfter;
    trimNewline = !stripAfter && !keepNewline;
  }
  flush(false, false);
  return out;
}

/** Parses a whole template into statements. */
export function parseTemplate(src: string): Stmt[] {
  const tags = lexTemplate(src);
  let pos = 0;
  const parseBody = (enders: string[]): { body: Stmt[]; ender: string | null; parser: ExprParser | null } => {
    const body: Stmt[] = [];
    while (pos < tags.length) {
      const tag = tags[pos++]!;
      if (tag.kind === 'text') {
        body.push({ type: 'text', text: tag.text! });
        continue;
      }
      const p = new ExprParser(tag.toks!);
      if (tag.kind === 'output') {
        const expr = p.parseTuple(true);
        if (!p.atEnd())
          throw new SyntaxFailure(`expected token 'end of print statement', got ${describe(p.peek())}`);
        body.push({ type: 'output', expr });
        continue;
      }
      const kw = p.peek();
      if (kw.t !== 'name') throw new SyntaxFailure('tag name expected');
      if (enders.includes(kw.v)) {
        p.next();
        return { body, ender: kw.v, parser: p };
      }
      p.next();
      switch (kw.v) {
        case 'if': {
          const branches: Array<[JNode, Stmt[]]> = [];
          let cp = p;
          let cond = cp.parseTuple(false);
          let elseBody: Stmt[] = [];
          for (;;) {
            if (!cp.atEnd())
              throw new SyntaxFailure(`expected token 'end of statement block', got ${describe(cp.peek())}`);
            const r = parseBody(['elif', 'else', 'endif']);
            branches.push([cond, r.body]);
            if (r.ender === 'elif') {
              cp = r.parser!;
              cond = cp.parseTuple(false);
              continue;
            }
            if (r.ender === 'else') {
              const r2 = parseBody(['endif']);
              if (r2.ender !== 'endif')
                throw new SyntaxFailure(
                  "Unexpected end of template. Jinja was looking for the following tags: 'endif'.",
                );
              elseBody = r2.body;
            } else if (r.ender !== 'endif') {
              throw new SyntaxFailure(
                "Unexpected end of template. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'.",
              );
            }
            break;
          }
          body.push({ type: 'if', branches, else: elseBody });
          break;
        }
        case 'for': {
          const target = parseTargets(p);
          if (!p.isName('in')) throw new SyntaxFailure(`expected token 'in', got ${describe(p.peek())}`);
          p.next();
          const iter = p.parseTuple(false, false);
          let filter: JNode | null = null;
          if (p.isName('if')) {
            p.next();
            filter = p.parseExpression();
          }
          if (!p.atEnd())
            throw new SyntaxFailure(`expected token 'end of statement block', got ${describe(p.peek())}`);
          const r = parseBody(['else', 'endfor']);
          let elseBody: Stmt[] = [];
          if (r.ender === 'else') {
            const r2 = parseBody(['endfor']);
            if (r2.ender !== 'endfor')
              throw new SyntaxFailure(
                "Unexpected end of template. Jinja was looking for the following tags: 'endfor'.",
              );
            elseBody = r2.body;
          } else if (r.ender !== 'endfor') {
            throw new SyntaxFailure(
              "Unexpected end of template. Jinja was looking for the following tags: 'endfor' or 'else'.",
            );
          }
          body.push({ type: 'for', target, iter, filter, body: r.body, else: elseBody });
          break;
        }
        case 'set': {
          const target = parseTargets(p);
          if (!p.isOp('=')) throw new SyntaxFailure('block set is not supported');
          p.next();
          const value = p.parseTuple(true);
          if (!p.atEnd())
            throw new SyntaxFailure(`expected token 'end of statement block', got ${describe(p.peek())}`);
          body.push({ type: 'set', target, value });
          break;
        }
        default:
          throw new SyntaxFailure(`Encountered unknown tag '${kw.v}'.`);
      }
    }
    return { body, ender: null, parser: null };
  };
  const { body, ender } = parseBody([]);
  if (ender !== null) throw new SyntaxFailure(`Encountered unknown tag '${ender}'.`);
  return body;
}

function parseTargets(p: ExprParser): string[] {
  const names = [p.expectName()];
  while (p.isOp(',')) {
    p.next();
    names.push(p.expectName());
  }
  return names;
}
