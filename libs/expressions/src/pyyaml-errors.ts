/**
 * Why PyYAML refuses a malformed document, in PyYAML's words: its reader, scanner and parser
 * (yaml.SafeLoader as mistral.utils.safe_yaml configures it: `&`, `*` and `@` start plain text)
 * run over the text, building no values, and the first problem is reported as PyYAML reports it
 * (ScannerError / ParserError with their marks and snippets, ReaderError). Values are still built by
 * the `yaml` package; this only words the refusal of a document that package already refused.
 */

export interface PyYamlProblem {
  type: 'ReaderError' | 'ScannerError' | 'ParserError' | 'ComposerError';
  message: string;
}

class Problem extends Error {
  constructor(
    readonly type: PyYamlProblem['type'],
    message: string,
  ) {
    super(message);
  }
}

interface Mark {
  index: number;
  line: number;
  column: number;
}

const BREAKS = '\r\n\x85\u2028\u2029';
const ZBREAKS = `\0${BREAKS}`;
const ZSPACE_BREAKS = `\0 ${BREAKS}`;
const ZWHITE = `\0 \t${BREAKS}`;
const ALNUM = /^[0-9A-Za-z\-_]$/;
const HEX = /^[0-9A-Fa-f]$/;
const ESCAPE_REPLACEMENTS = '0abt\tnvfre "\\/N_LP';
const ESCAPE_CODES: Record<string, number> = { x: 2, u: 4, U: 8 };
const NON_PRINTABLE = /[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** Python's repr() of a one-character string, as PyYAML's messages quote characters. */
function charRepr(ch: string): string {
  const map: Record<string, string> = { '\0': "'\\x00'", '\t': "'\\t'", '\n': "'\\n'", '\r': "'\\r'" };
  if (ch in map) return map[ch]!;
  if (ch === "'") return '"\'"';
  if (ch === '\\') return "'\\\\'";
  const c = ch.codePointAt(0)!;
  // what Python's str.isprintable() refuses: other (C*) and separator (Z*) characters but ' '
  if (ch !== ' ' && /^[\p{C}\p{Z}]$/u.test(ch)) {
    if (c < 0x100) return `'\\x${c.toString(16).padStart(2, '0')}'`;
    if (c < 0x10000) return `'\\u${c.toString(16).padStart(4, '0')}'`;
    return `'\\U${c.toString(16).padStart(8, '0')}'`;
  }
  return `'${ch}'`;
}

interface Token {
  id: string;
  start: Mark;
  end: Mark;
  handle?: string | null;
  directive?: { name: string; major?: number; handle?: string };
}

interface SimpleKey {
  tokenNumber: number;
  required: boolean;
  mark: Mark;
}

class Scanner {
  readonly buf: string[];
  private pointer = 0;
  private line = 0;
  private column = 0;
  private done = false;
  private flowLevel = 0;
  private readonly tokens: Token[] = [];
  private tokensTaken = 0;
  private indent = -1;
  private readonly indents: number[] = [];
  private allowSimpleKey = true;
  private readonly possibleSimpleKeys = new Map<number, SimpleKey>();

  constructor(text: string) {
    this.buf = [...text, '\0'];
    const bad = NON_PRINTABLE.exec(text);
    if (bad) {
      const position = [...text.slice(0, bad.index)].length;
      throw new Problem(
        'ReaderError',
        `unacceptable character #x${bad[0].codePointAt(0)!.toString(16).padStart(4, '0')}: special characters are not allowed\n  in "<unicode string>", position ${position}`,
      );
    }
    this.tokens.push({ id: '<stream start>', start: this.mark(), end: this.mark() });
  }

  mark(): Mark {
    return { index: this.pointer, line: this.line, column: this.column };
  }
  private peek(k = 0): string {
    return this.buf[this.pointer + k] ?? '\0';
  }
  private prefix(n: number): string {
    return this.buf.slice(this.pointer, this.pointer + n).join('');
  }
  private forward(n = 1): void {
    for (let i = 0; i < n; i++) {
      const ch = this.buf[this.pointer]!;
      this.pointer++;
      if ('\n\x85\u2028\u2029'.includes(ch) || (ch === '\r' && this.buf[this.pointer] !== '\n')) {
        this.line++;
        this.column = 0;
      } else if (ch !== '\uFEFF') this.column++;
    }
  }

  /** PyYAML's Mark.__str__ with its snippet. */
  markText(m: Mark): string {
    let head = '';
    let start = m.index;
    while (start > 0 && !ZBREAKS.includes(this.buf[start - 1]!)) {
      start--;
      if (m.index - start > 75 / 2 - 1) {
        head = ' ... ';
        start += 5;
        break;
      }
    }
    let tail = '';
    let end = m.index;
    while (end < this.buf.length && !ZBREAKS.includes(this.buf[end]!)) {
      end++;
      if (end - m.index > 75 / 2 - 1) {
        tail = ' ... ';
        end -= 5;
        break;
      }
    }
    const snippet = this.buf.slice(start, end).join('');
    return (
      `  in "<unicode string>", line ${m.line + 1}, column ${m.column + 1}:\n` +
      `    ${head}${snippet}${tail}\n${' '.repeat(4 + m.index - start + head.length)}^`
    );
  }

  /** MarkedYAMLError.__str__. */
  error(
    type: 'ScannerError' | 'ParserError' | 'ComposerError',
    context: string | null,
    contextMark: Mark | null,
    problem: string,
    problemMark: Mark,
  ): Problem {
    const lines: string[] = [];
    if (context !== null) lines.push(context);
    if (
      contextMark !== null &&
      (contextMark.line !== problemMark.line || contextMark.column !== problemMark.column)
    )
      lines.push(this.markText(contextMark));
    lines.push(problem, this.markText(problemMark));
    return new Problem(type, lines.join('\n'));
  }
  private scanError(context: string | null, contextMark: Mark | null, problem: string): Problem {
    return this.error('ScannerError', context, contextMark, problem, this.mark());
  }

  // ---- token queue

  checkToken(...ids: string[]): boolean {
    this.fill();
    return this.tokens.length > 0 && (ids.length === 0 || ids.includes(this.tokens[0]!.id));
  }
  peekToken(): Token {
    this.fill();
    return this.tokens[0]!;
  }
  getToken(): Token {
    this.fill();
    this.tokensTaken++;
    return this.tokens.shift()!;
  }
  private fill(): void {
    while (this.needMoreTokens()) this.fetchNextToken();
  }
  private needMoreTokens(): boolean {
    if (this.done) return false;
    if (this.tokens.length === 0) return true;
    this.staleSimpleKeys();
    return this.nextPossibleSimpleKey() === this.tokensTaken;
  }
  private nextPossibleSimpleKey(): number | null {
    let min: number | null = null;
    for (const k of this.possibleSimpleKeys.values())
      if (min === null || k.tokenNumber < min) min = k.tokenNumber;
    return min;
  }
  private staleSimpleKeys(): void {
    for (const [level, key] of [...this.possibleSimpleKeys]) {
      if (key.mark.line !== this.line || this.pointer - key.mark.index > 1024) {
        if (key.required)
          throw this.scanError('while scanning a simple key', key.mark, "could not find expected ':'");
        this.possibleSimpleKeys.delete(level);
      }
    }
  }
  private saveSimpleKey(): void {
    const required = this.flowLevel === 0 && this.indent === this.column;
    if (!this.allowSimpleKey) return;
    this.removeSimpleKey();
    this.possibleSimpleKeys.set(this.flowLevel, {
      tokenNumber: this.tokensTaken + this.tokens.length,
      required,
      mark: this.mark(),
    });
  }
  private removeSimpleKey(): void {
    const key = this.possibleSimpleKeys.get(this.flowLevel);
    if (!key) return;
    if (key.required)
      throw this.scanError('while scanning a simple key', key.mark, "could not find expected ':'");
    this.possibleSimpleKeys.delete(this.flowLevel);
  }
  private unwindIndent(column: number): void {
    if (this.flowLevel > 0) return;
    while (this.indent > column) {
      const m = this.mark();
      this.indent = this.indents.pop()!;
      this.tokens.push({ id: '<block end>', start: m, end: m });
    }
  }
  private addIndent(column: number): boolean {
    if (this.indent >= column) return false;
    this.indents.push(this.indent);
    this.indent = column;
    return true;
  }
  private push(id: string, start: Mark, extra: Partial<Token> = {}): void {
    this.tokens.push({ id, start, end: this.mark(), ...extra });
  }
  private simple(id: string): void {
    const start = this.mark();
    this.forward(id === '<document start>' || id === '<document end>' ? 3 : 1);
    this.push(id, start);
  }

  private fetchNextToken(): void {
    this.scanToNextToken();
    this.staleSimpleKeys();
    this.unwindIndent(this.column);
    const ch = this.peek();
    const next = this.peek(1);
    if (ch === '\0') {
      this.unwindIndent(-1);
      this.removeSimpleKey();
      this.allowSimpleKey = false;
      this.possibleSimpleKeys.clear();
      const m = this.mark();
      this.tokens.push({ id: '<stream end>', start: m, end: m });
      this.done = true;
      return;
    }
    if (ch === '%' && this.column === 0) return this.fetchDirective();
    const marker = this.prefix(3);
    if (this.column === 0 && (marker === '---' || marker === '...') && ZWHITE.includes(this.peek(3))) {
      this.unwindIndent(-1);
      this.removeSimpleKey();
      this.allowSimpleKey = false;
      return this.simple(marker === '---' ? '<document start>' : '<document end>');
    }
    if (ch === '[' || ch === '{') {
      this.saveSimpleKey();
      this.flowLevel++;
      this.allowSimpleKey = true;
      return this.simple(ch);
    }
    if (ch === ']' || ch === '}') {
      this.removeSimpleKey();
      this.flowLevel--;
      this.allowSimpleKey = false;
      return this.simple(ch);
    }
    if (ch === ',') {
      this.allowSimpleKey = true;
      this.removeSimpleKey();
      return this.simple(',');
    }
    if (ch === '-' && ZWHITE.includes(next)) {
      if (this.flowLevel === 0) {
        if (!this.allowSimpleKey) throw this.scanError(null, null, 'sequence entries are not allowed here');
        if (this.addIndent(this.column)) this.push('<block sequence start>', this.mark());
      }
      this.allowSimpleKey = true;
      this.removeSimpleKey();
      return this.simple('-');
    }
    if (ch === '?' && (this.flowLevel > 0 || ZWHITE.includes(next))) {
      if (this.flowLevel === 0) {
        if (!this.allowSimpleKey) throw this.scanError(null, null, 'mapping keys are not allowed here');
        if (this.addIndent(this.column)) this.push('<block mapping start>', this.mark());
      }
      this.allowSimpleKey = this.flowLevel === 0;
      this.removeSimpleKey();
      return this.simple('?');
    }
    if (ch === ':' && (this.flowLevel > 0 || ZWHITE.includes(next))) return this.fetchValue();
    if (ch === '!') {
      this.saveSimpleKey();
      this.allowSimpleKey = false;
      return this.scanTag();
    }
    if ((ch === '|' || ch === '>') && this.flowLevel === 0) {
      this.allowSimpleKey = true;
      this.removeSimpleKey();
      return this.scanBlockScalar();
    }
    if (ch === "'" || ch === '"') {
      this.saveSimpleKey();
      this.allowSimpleKey = false;
      return this.scanFlowScalar(ch === '"');
    }
    // Mistral's loader: an anchor or alias indicator, and '@', start plain text
    if (ch === '&' || ch === '*' || this.checkPlain()) {
      this.saveSimpleKey();
      this.allowSimpleKey = false;
      return this.scanPlain();
    }
    throw this.scanError(
      'while scanning for the next token',
      null,
      `found character ${charRepr(ch)} that cannot start any token`,
    );
  }

  private checkPlain(): boolean {
    const ch = this.peek();
    if (ch === '@') return true;
    if (!`\0 \t${BREAKS}-?:,[]{}#&*!|>'"%@\``.includes(ch)) return true;
    return !ZWHITE.includes(this.peek(1)) && (ch === '-' || (this.flowLevel === 0 && '?:'.includes(ch)));
  }

  private scanToNextToken(): void {
    if (this.pointer === 0 && this.peek() === '\uFEFF') this.forward();
    for (;;) {
      while (this.peek() === ' ') this.forward();
      if (this.peek() === '#') while (!ZBREAKS.includes(this.peek())) this.forward();
      if (this.scanLineBreak()) {
        if (this.flowLevel === 0) this.allowSimpleKey = true;
      } else return;
    }
  }
  private scanLineBreak(): string {
    const ch = this.peek();
    if ('\r\n\x85'.includes(ch)) {
      this.forward(this.prefix(2) === '\r\n' ? 2 : 1);
      return '\n';
    }
    if ('\u2028\u2029'.includes(ch)) {
      this.forward();
      return ch;
    }
    return '';
  }

  private fetchValue(): void {
    const key = this.possibleSimpleKeys.get(this.flowLevel);
    if (key) {
      this.possibleSimpleKeys.delete(this.flowLevel);
      const at = key.tokenNumber - this.tokensTaken;
      this.tokens.splice(at, 0, { id: '?', start: key.mark, end: key.mark });
      if (this.flowLevel === 0 && this.addIndent(key.mark.column))
        this.tokens.splice(at, 0, { id: '<block mapping start>', start: key.mark, end: key.mark });
      this.allowSimpleKey = false;
    } else {
      if (this.flowLevel === 0) {
        if (!this.allowSimpleKey) throw this.scanError(null, null, 'mapping values are not allowed here');
        if (this.addIndent(this.column)) this.push('<block mapping start>', this.mark());
      }
      this.allowSimpleKey = this.flowLevel === 0;
      this.removeSimpleKey();
    }
    this.simple(':');
  }

  private fetchDirective(): void {
    this.unwindIndent(-1);
    this.removeSimpleKey();
    this.allowSimpleKey = false;
    const start = this.mark();
    this.forward();
    let n = 0;
    while (ALNUM.test(this.peek(n))) n++;
    if (n === 0)
      throw this.scanError(
        'while scanning a directive',
        start,
        `expected alphabetic or numeric character, but found ${charRepr(this.peek())}`,
      );
    const name = this.prefix(n);
    this.forward(n);
    if (!ZSPACE_BREAKS.includes(this.peek()))
      throw this.scanError(
        'while scanning a directive',
        start,
        `expected alphabetic or numeric character, but found ${charRepr(this.peek())}`,
      );
    const expect = (problem: string): never => {
      throw this.scanError(
        'while scanning a directive',
        start,
        `${problem}, but found ${charRepr(this.peek())}`,
      );
    };
    let directive: Token['directive'];
    if (name === 'YAML') {
      while (this.peek() === ' ') this.forward();
      const number = (): number => {
        let k = 0;
        if (!/^[0-9]$/.test(this.peek())) expect('expected a digit');
        while (/^[0-9]$/.test(this.peek(k))) k++;
        const v = Number(this.prefix(k));
        this.forward(k);
        return v;
      };
      const major = number();
      if (this.peek() !== '.') expect("expected a digit or '.'");
      this.forward();
      number();
      if (!ZSPACE_BREAKS.includes(this.peek())) expect("expected a digit or ' '");
      directive = { name, major };
    } else if (name === 'TAG') {
      while (this.peek() === ' ') this.forward();
      const handle = this.scanTagHandle('directive', start);
      if (this.peek() !== ' ') expect("expected ' '");
      while (this.peek() === ' ') this.forward();
      this.scanTagUri('directive', start);
      if (!ZSPACE_BREAKS.includes(this.peek())) expect("expected ' '");
      directive = { name, handle };
    } else {
      while (!ZBREAKS.includes(this.peek())) this.forward();
      directive = { name };
    }
    this.push('<directive>', start, { directive });
    while (this.peek() === ' ') this.forward();
    if (this.peek() === '#') while (!ZBREAKS.includes(this.peek())) this.forward();
    if (!ZBREAKS.includes(this.peek())) expect('expected a comment or a line break');
    this.scanLineBreak();
  }

  private scanTag(): void {
    const start = this.mark();
    const next = this.peek(1);
    let handle: string | null = null;
    if (next === '<') {
      this.forward(2);
      this.scanTagUri('tag', start);
      if (this.peek() !== '>')
        throw this.scanError(
          'while parsing a tag',
          start,
          `expected '>', but found ${charRepr(this.peek())}`,
        );
      this.forward();
    } else if (ZWHITE.includes(next)) {
      this.forward();
    } else {
      let n = 1;
      let useHandle = false;
      for (let ch = next; !ZSPACE_BREAKS.includes(ch); ch = this.peek(++n)) {
        if (ch === '!') {
          useHandle = true;
          break;
        }
      }
      if (useHandle) handle = this.scanTagHandle('tag', start);
      else {
        handle = '!';
        this.forward();
      }
      this.scanTagUri('tag', start);
    }
    if (!ZSPACE_BREAKS.includes(this.peek()))
      throw this.scanError('while scanning a tag', start, `expected ' ', but found ${charRepr(this.peek())}`);
    this.push('<tag>', start, { handle });
  }
  private scanTagHandle(name: string, start: Mark): string {
    if (this.peek() !== '!')
      throw this.scanError(
        `while scanning a ${name}`,
        start,
        `expected '!', but found ${charRepr(this.peek())}`,
      );
    let n = 1;
    let ch = this.peek(n);
    if (ch !== ' ') {
      while (ALNUM.test(ch)) ch = this.peek(++n);
      if (ch !== '!') {
        this.forward(n);
        throw this.scanError(`while scanning a ${name}`, start, `expected '!', but found ${charRepr(ch)}`);
      }
      n++;
    }
    const handle = this.prefix(n);
    this.forward(n);
    return handle;
  }
  private scanTagUri(name: string, start: Mark): void {
    let n = 0;
    let any = false;
    for (let ch = this.peek(); /[0-9A-Za-z\-;/?:@&=+$,_.!~*'()[\]%]/.test(ch); ch = this.peek(n)) {
      if (ch === '%') {
        this.forward(n);
        n = 0;
        while (this.peek() === '%') {
          this.forward();
          for (let k = 0; k < 2; k++)
            if (!HEX.test(this.peek(k)))
              throw this.scanError(
                `while scanning a ${name}`,
                start,
                `expected URI escape sequence of 2 hexadecimal numbers, but found ${charRepr(this.peek(k))}`,
              );
          this.forward(2);
        }
        any = true;
      } else n++;
    }
    if (n > 0) {
      this.forward(n);
      any = true;
    }
    if (!any)
      throw this.scanError(
        `while parsing a ${name}`,
        start,
        `expected URI, but found ${charRepr(this.peek())}`,
      );
  }

  private scanBlockScalar(): void {
    const start = this.mark();
    this.forward();
    let increment: number | null = null;
    const context = 'while scanning a block scalar';
    const digit = () => {
      const ch = this.peek();
      if (!/^[0-9]$/.test(ch)) return false;
      increment = Number(ch);
      if (increment === 0)
        throw this.scanError(context, start, 'expected indentation indicator in the range 1-9, but found 0');
      this.forward();
      return true;
    };
    if ('+-'.includes(this.peek())) {
      this.forward();
      digit();
    } else if (digit() && '+-'.includes(this.peek())) this.forward();
    if (!ZSPACE_BREAKS.includes(this.peek()))
      throw this.scanError(
        context,
        start,
        `expected chomping or indentation indicators, but found ${charRepr(this.peek())}`,
      );
    while (this.peek() === ' ') this.forward();
    if (this.peek() === '#') while (!ZBREAKS.includes(this.peek())) this.forward();
    if (!ZBREAKS.includes(this.peek()))
      throw this.scanError(
        context,
        start,
        `expected a comment or a line break, but found ${charRepr(this.peek())}`,
      );
    this.scanLineBreak();
    const minIndent = Math.max(this.indent + 1, 1);
    let indent: number;
    if (increment === null) {
      let maxIndent = 0;
      while (` ${BREAKS}`.includes(this.peek()) && this.peek() !== '\0') {
        if (this.peek() !== ' ') this.scanLineBreak();
        else {
          this.forward();
          if (this.column > maxIndent) maxIndent = this.column;
        }
      }
      indent = Math.max(minIndent, maxIndent);
    } else {
      indent = minIndent + (increment as number) - 1;
      this.blockBreaks(indent);
    }
    while (this.column === indent && this.peek() !== '\0') {
      while (!ZBREAKS.includes(this.peek())) this.forward();
      this.scanLineBreak();
      this.blockBreaks(indent);
    }
    this.push('<scalar>', start);
  }
  private blockBreaks(indent: number): void {
    while (this.column < indent && this.peek() === ' ') this.forward();
    while (BREAKS.includes(this.peek()) && this.peek() !== '\0') {
      this.scanLineBreak();
      while (this.column < indent && this.peek() === ' ') this.forward();
    }
  }

  private scanFlowScalar(double: boolean): void {
    const start = this.mark();
    const quote = this.peek();
    this.forward();
    this.flowNonSpaces(double, start);
    while (this.peek() !== quote) {
      this.flowSpaces(start);
      this.flowNonSpaces(double, start);
    }
    this.forward();
    this.push('<scalar>', start);
  }
  private flowNonSpaces(double: boolean, start: Mark): void {
    for (;;) {
      let n = 0;
      while (!`'"\\\0 \t${BREAKS}`.includes(this.peek(n))) n++;
      this.forward(n);
      const ch = this.peek();
      if (!double && ch === "'" && this.peek(1) === "'") this.forward(2);
      else if ((double && ch === "'") || (!double && '"\\'.includes(ch))) this.forward();
      else if (double && ch === '\\') {
        this.forward();
        const e = this.peek();
        if (ESCAPE_REPLACEMENTS.includes(e)) this.forward();
        else if (e in ESCAPE_CODES) {
          const len = ESCAPE_CODES[e]!;
          this.forward();
          for (let k = 0; k < len; k++)
            if (!HEX.test(this.peek(k)))
              throw this.scanError(
                'while scanning a double-quoted scalar',
                start,
                `expected escape sequence of ${len} hexadecimal numbers, but found ${charRepr(this.peek(k))}`,
              );
          this.forward(len);
        } else if (BREAKS.includes(e) && e !== '\0') {
          this.scanLineBreak();
          this.flowBreaks(start);
        } else
          throw this.scanError(
            'while scanning a double-quoted scalar',
            start,
            `found unknown escape character ${charRepr(e)}`,
          );
      } else return;
    }
  }
  private flowSpaces(start: Mark): void {
    while (' \t'.includes(this.peek())) this.forward();
    const ch = this.peek();
    if (ch === '\0')
      throw this.scanError('while scanning a quoted scalar', start, 'found unexpected end of stream');
    if (BREAKS.includes(ch)) {
      this.scanLineBreak();
      this.flowBreaks(start);
    }
  }
  private flowBreaks(start: Mark): void {
    for (;;) {
      const p = this.prefix(3);
      if ((p === '---' || p === '...') && ZWHITE.includes(this.peek(3)))
        throw this.scanError('while scanning a quoted scalar', start, 'found unexpected document separator');
      while (' \t'.includes(this.peek())) this.forward();
      if (BREAKS.includes(this.peek()) && this.peek() !== '\0') this.scanLineBreak();
      else return;
    }
  }

  private scanPlain(): void {
    const start = this.mark();
    let end = start;
    const indent = this.indent + 1;
    for (;;) {
      if (this.peek() === '#') break;
      let n = 0;
      for (;;) {
        const ch = this.peek(n);
        if (
          ZWHITE.includes(ch) ||
          (ch === ':' && (ZWHITE + (this.flowLevel > 0 ? ',[]{}' : '')).includes(this.peek(n + 1))) ||
          (this.flowLevel > 0 && ',?[]{}'.includes(ch))
        )
          break;
        n++;
      }
      if (n === 0) break;
      this.allowSimpleKey = false;
      this.forward(n);
      end = this.mark();
      const spaces = this.plainSpaces();
      if (!spaces || this.peek() === '#' || (this.flowLevel === 0 && this.column < indent)) break;
    }
    this.tokens.push({ id: '<scalar>', start, end });
  }
  /** Whether whitespace or line breaks follow (scan_plain_spaces returned chunks). */
  private plainSpaces(): boolean {
    let n = 0;
    while (this.peek(n) === ' ') n++;
    this.forward(n);
    const ch = this.peek();
    if (BREAKS.includes(ch) && ch !== '\0') {
      this.scanLineBreak();
      this.allowSimpleKey = true;
      const separator = () => {
        const p = this.prefix(3);
        return (p === '---' || p === '...') && ZWHITE.includes(this.peek(3));
      };
      if (separator()) return false;
      while (` ${BREAKS}`.includes(this.peek()) && this.peek() !== '\0') {
        if (this.peek() === ' ') this.forward();
        else {
          this.scanLineBreak();
          if (separator()) return false;
        }
      }
      return true;
    }
    return n > 0;
  }
}

type State = () => void;

/** PyYAML's parser over the scanner's tokens, producing no events: only its refusals. */
class Parser {
  private readonly states: State[] = [];
  private readonly marks: Mark[] = [];
  private state: State | null;
  private tagHandles = new Set(['!', '!!']);
  /** Where the stream's first document's root node starts (yaml.load composes a single one). */
  private root: Mark | null = null;
  private documents = 0;

  constructor(private readonly s: Scanner) {
    this.state = () => {
      this.s.getToken();
      this.state = () => this.implicitDocumentStart();
    };
  }

  run(): void {
    while (this.state) this.state();
  }
  private fail(context: string | null, contextMark: Mark | null, problem: string, mark: Mark): never {
    throw this.s.error('ParserError', context, contextMark, problem, mark);
  }
  private pop(): void {
    this.state = this.states.pop() ?? null;
  }

  private implicitDocumentStart(): void {
    if (!this.s.checkToken('<directive>', '<document start>', '<stream end>')) {
      this.tagHandles = new Set(['!', '!!']);
      this.documents++;
      this.states.push(() => this.documentEnd());
      this.blockNode();
    } else this.documentStart();
  }
  private documentStart(): void {
    while (this.s.checkToken('<document end>')) this.s.getToken();
    if (this.s.checkToken('<stream end>')) {
      this.s.getToken();
      this.state = null;
      return;
    }
    // process_directives: one YAML directive, of version 1.x; each tag handle once
    const first = this.s.peekToken().start;
    this.tagHandles = new Set();
    let version = false;
    while (this.s.checkToken('<directive>')) {
      const t = this.s.getToken();
      const d = t.directive!;
      if (d.name === 'YAML') {
        if (version) this.fail(null, null, 'found duplicate YAML directive', t.start);
        version = true;
        if (d.major !== 1)
          this.fail(null, null, 'found incompatible YAML document (version 1.* is required)', t.start);
      } else if (d.name === 'TAG') {
        if (this.tagHandles.has(d.handle!))
          this.fail(null, null, `duplicate tag handle '${d.handle}'`, t.start);
        this.tagHandles.add(d.handle!);
      }
    }
    this.tagHandles.add('!').add('!!');
    if (!this.s.checkToken('<document start>'))
      this.fail(
        null,
        null,
        `expected '<document start>', but found '${this.s.peekToken().id}'`,
        this.s.peekToken().start,
      );
    this.s.getToken();
    if (this.documents++ > 0)
      throw this.s.error(
        'ComposerError',
        'expected a single document in the stream',
        this.root,
        'but found another document',
        first,
      );
    this.states.push(() => this.documentEnd());
    this.state = () => this.documentContent();
  }
  private documentEnd(): void {
    if (this.s.checkToken('<document end>')) this.s.getToken();
    this.state = () => this.documentStart();
  }
  private documentContent(): void {
    if (this.s.checkToken('<directive>', '<document start>', '<document end>', '<stream end>')) {
      this.root ??= this.s.peekToken().start;
      this.pop();
    } else this.blockNode();
  }

  private blockNode(): void {
    this.node(true, false);
  }
  private flowNode(): void {
    this.node(false, false);
  }
  private node(block: boolean, indentless: boolean): void {
    if (this.s.checkToken('<alias>')) {
      this.s.getToken();
      this.pop();
      return;
    }
    let start: Mark | null = null;
    let tag: Token | null = null;
    if (this.s.checkToken('<anchor>')) {
      start = this.s.getToken().start;
      if (this.s.checkToken('<tag>')) tag = this.s.getToken();
    } else if (this.s.checkToken('<tag>')) {
      tag = this.s.getToken();
      start = tag.start;
      if (this.s.checkToken('<anchor>')) this.s.getToken();
    }
    if (tag && tag.handle != null && !this.tagHandles.has(tag.handle))
      this.fail('while parsing a node', start, `found undefined tag handle '${tag.handle}'`, tag.start);
    start ??= this.s.peekToken().start;
    this.root ??= start;
    if (indentless && this.s.checkToken('-')) {
      this.state = () => this.indentlessSequenceEntry();
      return;
    }
    if (this.s.checkToken('<scalar>')) {
      this.s.getToken();
      this.pop();
    } else if (this.s.checkToken('[')) this.state = () => this.flowSequenceFirstEntry();
    else if (this.s.checkToken('{')) this.state = () => this.flowMappingFirstKey();
    else if (block && this.s.checkToken('<block sequence start>'))
      this.state = () => this.blockSequenceFirstEntry();
    else if (block && this.s.checkToken('<block mapping start>'))
      this.state = () => this.blockMappingFirstKey();
    else if (tag) this.pop();
    else {
      const t = this.s.peekToken();
      this.fail(
        `while parsing a ${block ? 'block' : 'flow'} node`,
        start,
        `expected the node content, but found '${t.id}'`,
        t.start,
      );
    }
  }

  private blockSequenceFirstEntry(): void {
    this.marks.push(this.s.getToken().start);
    this.blockSequenceEntry();
  }
  private blockSequenceEntry(): void {
    if (this.s.checkToken('-')) {
      this.s.getToken();
      if (!this.s.checkToken('-', '<block end>')) {
        this.states.push(() => this.blockSequenceEntry());
        this.blockNode();
      } else this.state = () => this.blockSequenceEntry();
      return;
    }
    if (!this.s.checkToken('<block end>')) {
      const t = this.s.peekToken();
      this.fail(
        'while parsing a block collection',
        this.marks.at(-1)!,
        `expected <block end>, but found '${t.id}'`,
        t.start,
      );
    }
    this.s.getToken();
    this.pop();
    this.marks.pop();
  }
  private indentlessSequenceEntry(): void {
    if (this.s.checkToken('-')) {
      this.s.getToken();
      if (!this.s.checkToken('-', '?', ':', '<block end>')) {
        this.states.push(() => this.indentlessSequenceEntry());
        this.blockNode();
      } else this.state = () => this.indentlessSequenceEntry();
      return;
    }
    this.pop();
  }
  private blockMappingFirstKey(): void {
    this.marks.push(this.s.getToken().start);
    this.blockMappingKey();
  }
  private blockMappingKey(): void {
    if (this.s.checkToken('?')) {
      this.s.getToken();
      if (!this.s.checkToken('?', ':', '<block end>')) {
        this.states.push(() => this.blockMappingValue());
        this.node(true, true);
      } else this.state = () => this.blockMappingValue();
      return;
    }
    if (!this.s.checkToken('<block end>')) {
      const t = this.s.peekToken();
      this.fail(
        'while parsing a block mapping',
        this.marks.at(-1)!,
        `expected <block end>, but found '${t.id}'`,
        t.start,
      );
    }
    this.s.getToken();
    this.pop();
    this.marks.pop();
  }
  private blockMappingValue(): void {
    if (this.s.checkToken(':')) {
      this.s.getToken();
      if (!this.s.checkToken('?', ':', '<block end>')) {
        this.states.push(() => this.blockMappingKey());
        this.node(true, true);
      } else this.state = () => this.blockMappingKey();
    } else this.state = () => this.blockMappingKey();
  }

  private flowSequenceFirstEntry(): void {
    this.marks.push(this.s.getToken().start);
    this.flowSequenceEntry(true);
  }
  private flowSequenceEntry(first = false): void {
    if (!this.s.checkToken(']')) {
      if (!first) {
        if (this.s.checkToken(',')) this.s.getToken();
        else {
          const t = this.s.peekToken();
          this.fail(
            'while parsing a flow sequence',
            this.marks.at(-1)!,
            `expected ',' or ']', but got '${t.id}'`,
            t.start,
          );
        }
      }
      if (this.s.checkToken('?')) {
        this.state = () => this.flowSequenceEntryMappingKey();
        return;
      }
      if (!this.s.checkToken(']')) {
        this.states.push(() => this.flowSequenceEntry());
        this.flowNode();
        return;
      }
    }
    this.s.getToken();
    this.pop();
    this.marks.pop();
  }
  private flowSequenceEntryMappingKey(): void {
    this.s.getToken();
    if (!this.s.checkToken(':', ',', ']')) {
      this.states.push(() => this.flowSequenceEntryMappingValue());
      this.flowNode();
    } else this.state = () => this.flowSequenceEntryMappingValue();
  }
  private flowSequenceEntryMappingValue(): void {
    if (this.s.checkToken(':')) {
      this.s.getToken();
      if (!this.s.checkToken(',', ']')) {
        this.states.push(() => (this.state = () => this.flowSequenceEntry()));
        this.flowNode();
      } else this.state = () => this.flowSequenceEntry();
    } else this.state = () => this.flowSequenceEntry();
  }
  private flowMappingFirstKey(): void {
    this.marks.push(this.s.getToken().start);
    this.flowMappingKey(true);
  }
  private flowMappingKey(first = false): void {
    if (!this.s.checkToken('}')) {
      if (!first) {
        if (this.s.checkToken(',')) this.s.getToken();
        else {
          const t = this.s.peekToken();
          this.fail(
            'while parsing a flow mapping',
            this.marks.at(-1)!,
            `expected ',' or '}', but got '${t.id}'`,
            t.start,
          );
        }
      }
      if (this.s.checkToken('?')) {
        this.s.getToken();
        if (!this.s.checkToken(':', ',', '}')) {
          this.states.push(() => this.flowMappingValue());
          this.flowNode();
        } else this.state = () => this.flowMappingValue();
        return;
      }
      if (!this.s.checkToken('}')) {
        this.states.push(() => (this.state = () => this.flowMappingKey()));
        this.flowNode();
        return;
      }
    }
    this.s.getToken();
    this.pop();
    this.marks.pop();
  }
  private flowMappingValue(): void {
    if (this.s.checkToken(':')) {
      this.s.getToken();
      if (!this.s.checkToken(',', '}')) {
        this.states.push(() => this.flowMappingKey());
        this.flowNode();
      } else this.state = () => this.flowMappingKey();
    } else this.state = () => this.flowMappingKey();
  }
}

/** PyYAML's refusal of `text` (reader, scanner or parser), or null when PyYAML parses it. */
export function pyYamlProblem(text: string): PyYamlProblem | null {
  try {
    new Parser(new Scanner(text)).run();
    return null;
  } catch (e) {
    if (e instanceof Problem) return { type: e.type, message: e.message };
    throw e;
  }
}
