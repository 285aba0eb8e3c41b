import { CST, Lexer, Parser } from 'yaml';
import { pyRepr } from './values';

/**
 * How PyYAML words its refusal of a malformed document (Mistral's yaml_parse is PyYAML's
 * safe_load), for the kinds of refusal modelled here; the wording was learned by running
 * Debian's python3-yaml on documents. Parsing itself stays with the `yaml` package: once it has
 * refused a document, the checks below look for the problem PyYAML would name first and word
 * it as PyYAML does (the first line names where the troubled construct started, the second
 * what was found instead, each with a mark quoting the line and a caret). What is not modelled
 * keeps the `yaml` package's message (README: "yaml_parse refusals").
 */
export interface PyYamlRefusal {
  /** PyYAML's exception class (ReaderError, ScannerError, ParserError). */
  type: 'ReaderError' | 'ScannerError' | 'ParserError';
  /** `str()` of the exception. */
  message: string;
}

/** Code points PyYAML reads; any other character refuses the whole text before parsing starts. */
function isReadable(cp: number): boolean {
  return (
    cp === 0x09 ||
    cp === 0x0a ||
    cp === 0x0d ||
    (cp >= 0x20 && cp <= 0x7e) ||
    cp === 0x85 ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    cp >= 0x10000
  );
}

/**
 * PyYAML's reader checks the whole text first: the first unreadable character (a control
 * character, a lone surrogate, U+FFFE/U+FFFF) refuses it, at its code-point position.
 */
export function readerRefusal(text: string): PyYamlRefusal | null {
  let position = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (!isReadable(cp)) {
      const hex = cp.toString(16).padStart(4, '0');
      return {
        type: 'ReaderError',
        message: `unacceptable character #x${hex}: special characters are not allowed\n  in "<unicode string>", position ${position}`,
      };
    }
    position++;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Marks: `  in "<unicode string>", line L, column C:` and the line quoted with a caret under the
// offending character. Lines end at \n, \r, \r\n, \x85, \u2028 or \u2029; columns count code
// points; a byte-order mark opening the text takes no column. A quoted line keeps at most 36
// characters on either side of the caret: a longer side is cut to 32 and marked ` ... `.

const BREAK = /[\n\r\x85\u2028\u2029]/;

function mark(text: string, offset: number): { line: number; column: number; rendered: string } {
  let line = 0;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    const ch = text[i]!;
    if (ch === '\r' && text[i + 1] === '\n') continue; // \r\n is one break, counted at the \n
    if (BREAK.test(ch)) {
      line++;
      lineStart = i + 1;
    }
  }
  let lineEnd = offset;
  while (lineEnd < text.length && !BREAK.test(text[lineEnd]!)) lineEnd++;
  let head = [...text.slice(lineStart, offset)];
  let tail = [...text.slice(offset, lineEnd)];
  const column = head.length - (lineStart === 0 && text.startsWith('\ufeff') && offset > 0 ? 1 : 0);
  if (head.length > 36) head = [' ... ', ...head.slice(-32)];
  if (tail.length > 36) tail = [...tail.slice(0, 32), ' ... '];
  const quoted = head.join('') + tail.join('');
  const caret = `${' '.repeat(head.join('').length)}^`;
  return {
    line,
    column,
    rendered: `  in "<unicode string>", line ${line + 1}, column ${column + 1}:\n    ${quoted}\n    ${caret}`,
  };
}

/** A refusal in PyYAML's layout; the context's mark is left out where it equals the problem's. */
function marked(
  type: PyYamlRefusal['type'],
  text: string,
  context: string | null,
  contextAt: number | null,
  problem: string,
  problemAt: number,
): PyYamlRefusal {
  const parts: string[] = [];
  const p = mark(text, problemAt);
  if (context !== null) {
    parts.push(context);
    if (contextAt !== null) {
      const c = mark(text, contextAt);
      if (c.line !== p.line || c.column !== p.column) parts.push(c.rendered);
    }
  }
  parts.push(problem, p.rendered);
  return { type, message: parts.join('\n') };
}

// ---------------------------------------------------------------------------------------------
// The problems modelled. Each names where PyYAML would stop (`at`); the earliest wins.

interface Problem {
  at: number;
  refusal: PyYamlRefusal;
}

/** Whether a `---` or `...` line (a document marker, even inside a flow or a quote) follows `from`. */
function markerLineAfter(text: string, from: number): boolean {
  return markerLineIn(text.slice(from)) >= 0;
}

/** Where the first `---` or `...` line of `source` starts (-1 when there is none). */
function markerLineIn(source: string): number {
  const m = /(?:^|[\n\r\x85\u2028\u2029])(?:---|\.\.\.)(?:[\s]|$)/.exec(source);
  return m ? m.index : -1;
}

interface LexedToken {
  kind: string | undefined;
  source: string;
  offset: number;
}

/**
 * The `yaml` lexer's tokens with where each starts in the text (its mode markers take no text);
 * a scalar's text (plain, or a block scalar's lines) has kind undefined.
 */
function lex(text: string): LexedToken[] {
  const out: LexedToken[] = [];
  let at = 0;
  const raw = [...new Lexer().lex(text)];
  for (let i = 0; i < raw.length; i++) {
    const source = raw[i]!;
    // a scalar's text follows its marker and has no kind of its own (a block scalar's lines may
    // start like a space); the lexer also puts a block scalar header or a `%` line after a marker
    const type = CST.tokenType(source) ?? undefined;
    const asText = type === undefined || type === 'space' || type === 'newline' || type === 'comment';
    const kind = out[out.length - 1]?.kind === 'scalar' && asText ? undefined : type;
    out.push({ kind, source, offset: at });
    if (kind !== 'doc-mode' && kind !== 'scalar' && kind !== 'flow-error-end') at += source.length;
  }
  return out;
}

/** Python's repr() of one character, as PyYAML quotes a character it did not expect. */
function charRepr(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (ch !== ' ' && /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Co}\p{Cn}\p{Cs}]/u.test(ch)) {
    const hex = cp.toString(16);
    if (cp < 0x100)
      return ch === '\t' || ch === '\n' || ch === '\r' ? pyRepr(ch) : `'\\x${hex.padStart(2, '0')}'`;
    return cp < 0x10000 ? `'\\u${hex.padStart(4, '0')}'` : `'\\U${hex.padStart(8, '0')}'`;
  }
  return pyRepr(ch);
}

/** Characters PyYAML takes after a backslash in a double-quoted scalar (besides x, u, U and breaks). */
const ESCAPES = ' "/0LNP\\_abefnrtv\t';
const HEX_DIGITS: Record<string, number> = { x: 2, u: 4, U: 8 };

/**
 * A quoted scalar: in a double-quoted one, the first escape PyYAML does not know ("found unknown
 * escape character 'q'", marked at that character) or a short hexadecimal escape ("expected
 * escape sequence of 2 hexadecimal numbers, but found '\"'", marked where the digits start);
 * then, one left open to the end of the text ("while scanning a quoted scalar … found unexpected
 * end of stream"). The first mark is where the quote opened.
 */
function quotedScalar(text: string, tokens: LexedToken[]): Problem | null {
  for (const t of tokens) {
    if (t.kind !== 'double-quoted-scalar' && t.kind !== 'single-quoted-scalar') continue;
    const scanning = (
      problem: string,
      at: number,
      context = 'while scanning a double-quoted scalar',
    ): Problem => ({
      at: t.offset,
      refusal: marked('ScannerError', text, context, t.offset, problem, at),
    });
    if (t.kind === 'double-quoted-scalar') {
      const marker = markerLineIn(t.source);
      for (let i = 1; i < t.source.length; i++) {
        if (t.source[i] === '"') break;
        if (t.source[i] !== '\\') continue;
        const escape = t.source[i + 1];
        if (escape === undefined) break;
        if (marker >= 0 && marker < i) return null;
        const digits = HEX_DIGITS[escape];
        if (digits) {
          const start = i + 2;
          for (let k = 0; k < digits; k++) {
            const ch = t.source[start + k];
            if (ch === undefined || !/[0-9A-Fa-f]/.test(ch)) {
              const found =
                ch === undefined
                  ? "'\\x00'"
                  : charRepr(String.fromCodePoint(t.source.codePointAt(start + k)!));
              return scanning(
                `expected escape sequence of ${digits} hexadecimal numbers, but found ${found}`,
                t.offset + start,
              );
            }
          }
          i += 1 + digits;
        } else if (ESCAPES.includes(escape) || BREAK.test(escape)) {
          i += 1;
        } else {
          const ch = String.fromCodePoint(t.source.codePointAt(i + 1)!);
          return scanning(`found unknown escape character ${charRepr(ch)}`, t.offset + i + 1);
        }
      }
    }
    if (t.offset + t.source.length !== text.length || isClosed(t.source, t.source[0]!)) continue;
    if (markerLineAfter(text, t.offset)) return null;
    return scanning('found unexpected end of stream', text.length, 'while scanning a quoted scalar');
  }
  return null;
}

/** Whether a quoted scalar's source has its closing quote (`\\"` and `''` do not close). */
function isClosed(source: string, quote: string): boolean {
  for (let i = 1; i < source.length; i++) {
    const ch = source[i];
    if (quote === '"' && ch === '\\') i++;
    else if (ch === quote) {
      if (quote === "'" && source[i + 1] === "'") i++;
      else return true;
    }
  }
  return false;
}

/**
 * A block scalar's header (`|` or `>`): at most one chomping indicator (`+`, `-`) and one
 * indentation digit 1-9, in either order, then spaces and a comment, or the end of the line.
 * PyYAML names the first character that breaks this, "while scanning a block scalar" from the
 * `|`: a `0` ("expected indentation indicator in the range 1-9, but found 0"), anything else
 * right after the indicators ("expected chomping or indentation indicators, but found 'x'"), or
 * after the spaces ("expected a comment or a line break, but found 'x'").
 */
function blockScalarHeader(text: string, tokens: LexedToken[]): Problem | null {
  let flow = 0;
  for (const t of tokens) {
    if (t.kind === 'flow-seq-start' || t.kind === 'flow-map-start') flow++;
    else if (t.kind === 'flow-seq-end' || t.kind === 'flow-map-end') flow = Math.max(0, flow - 1);
    // inside a flow collection a `|` cannot start a token at all (misplacedIndicator)
    if (t.kind !== 'block-scalar-header' || flow > 0) continue;
    const scanning = (problem: string, at: number): Problem => ({
      at: t.offset,
      refusal: marked('ScannerError', text, 'while scanning a block scalar', t.offset, problem, at),
    });
    const charAt = (i: number): string => String.fromCodePoint(text.codePointAt(i)!);
    let i = t.offset + 1;
    let chomping = false;
    let indentation = false;
    for (let k = 0; k < 2; k++) {
      const ch = text[i];
      if (!chomping && (ch === '+' || ch === '-')) chomping = true;
      else if (!indentation && ch !== undefined && /[0-9]/.test(ch)) {
        if (ch === '0') return scanning('expected indentation indicator in the range 1-9, but found 0', i);
        indentation = true;
      } else break;
      i++;
    }
    const ends = (at: number): boolean => at >= text.length || BREAK.test(text[at]!);
    if (!ends(i) && text[i] !== ' ')
      return scanning(`expected chomping or indentation indicators, but found ${charRepr(charAt(i))}`, i);
    while (text[i] === ' ') i++;
    if (!ends(i) && text[i] !== '#')
      return scanning(`expected a comment or a line break, but found ${charRepr(charAt(i))}`, i);
  }
  return null;
}

const cannotStart = (text: string, at: number, ch: string): Problem => ({
  at,
  refusal: marked(
    'ScannerError',
    text,
    'while scanning for the next token',
    null,
    `found character ${charRepr(ch)} that cannot start any token`,
    at,
  ),
});

/**
 * A tab where PyYAML looks for the next token: PyYAML skips only spaces between tokens, and a
 * plain scalar ends at a tab, so any tab outside a quoted scalar, a comment or a block scalar's
 * text is refused ("found character '\\t' that cannot start any token"). A tab in a block scalar's
 * text (where it may be content or a misplaced indentation) or in a directive is not judged.
 */
function tabBetweenTokens(text: string, tokens: LexedToken[]): Problem | null {
  let blockText = false;
  for (const t of tokens) {
    const inBlock = blockText && t.kind === undefined;
    if (t.kind === 'block-scalar-header') blockText = true;
    else if (t.kind !== 'scalar' && t.kind !== 'newline') blockText = false;
    if (t.kind === 'double-quoted-scalar' || t.kind === 'single-quoted-scalar') {
      // the lexer ends a quoted scalar at a line indented less than its block; PyYAML reads on
      if (!isClosed(t.source, t.source[0]!)) return null;
      continue;
    }
    if (t.kind === 'comment' || !t.source.includes('\t')) continue;
    if (inBlock || t.kind === 'directive-line' || t.kind === 'directive' || t.kind === 'error') return null;
    return cannotStart(text, t.offset + t.source.indexOf('\t'), '\t');
  }
  return null;
}

/**
 * Indicators PyYAML does not take where they stand: `%` away from the start of a line (a
 * directive starts only there) and a block scalar's `|` or `>` inside a flow collection.
 */
function misplacedIndicator(text: string, tokens: LexedToken[]): Problem | null {
  let flow = 0;
  for (const t of tokens) {
    if (t.kind === 'flow-seq-start' || t.kind === 'flow-map-start') flow++;
    else if (t.kind === 'flow-seq-end' || t.kind === 'flow-map-end') flow = Math.max(0, flow - 1);
    else if (t.kind === 'directive-line' && column(text, t.offset) > 0)
      return cannotStart(text, t.offset, '%');
    else if (t.kind === 'block-scalar-header' && flow > 0) return cannotStart(text, t.offset, t.source[0]!);
  }
  return null;
}

/**
 * A `]`, `}` or `,` outside any flow collection where PyYAML expects a node: at the start of a
 * document or right after `:`, `-`, `?` or `---` ("while parsing a block node … expected the node
 * content, but found ']'"). After a finished node PyYAML words it otherwise (not modelled).
 */
function strayFlowIndicator(text: string, tokens: LexedToken[]): Problem | null {
  const asksForNode = ['map-value-ind', 'seq-item-ind', 'explicit-key-ind', 'doc-start'];
  let flow = 0;
  let previous: LexedToken | undefined;
  for (const t of tokens) {
    const stray =
      flow === 0 && (t.kind === 'flow-seq-end' || t.kind === 'flow-map-end' || t.kind === 'comma');
    if (stray) {
      if (previous !== undefined && !asksForNode.includes(previous.kind ?? 'text')) return null;
      return {
        at: t.offset,
        refusal: marked(
          'ParserError',
          text,
          'while parsing a block node',
          t.offset,
          `expected the node content, but found '${t.source[0]!}'`,
          t.offset,
        ),
      };
    }
    if (t.kind === 'flow-seq-start' || t.kind === 'flow-map-start') flow++;
    else if (t.kind === 'flow-seq-end' || t.kind === 'flow-map-end') flow--;
    if (!['space', 'newline', 'comment', 'doc-mode', 'scalar'].includes(t.kind ?? 'text')) previous = t;
  }
  return null;
}

/**
 * A tag with a named handle (`!a!b`) no `%TAG` directive declares: PyYAML's parser refuses it
 * once it has read what follows the tag ("while parsing a node … found undefined tag handle
 * '!a!'", marked at the tag). Documents with a `%TAG` directive are not judged.
 */
function undefinedTagHandle(text: string, tokens: LexedToken[]): Problem | null {
  if (/(?:^|[\n\r\x85\u2028\u2029])%TAG/.test(text)) return null;
  let flow = 0;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.kind === 'flow-seq-start' || t.kind === 'flow-map-start') flow++;
    else if (t.kind === 'flow-seq-end' || t.kind === 'flow-map-end') flow = Math.max(0, flow - 1);
    const handle = t.kind === 'tag' ? /^(![0-9A-Za-z-]+!)./.exec(t.source) : null;
    if (!handle) continue;
    // in a flow collection the tag's place may be wrong first (not judged)
    if (flow > 0) return null;
    // the parser reads the node after the tag and the token after that (is it a key?) first
    const following = tokens
      .slice(k + 1)
      .filter((n) => !['space', 'scalar', 'newline', 'comment'].includes(n.kind ?? 'text'));
    const previous = tokens
      .slice(0, k)
      .reverse()
      .find((n) => !['space', 'newline', 'comment', 'doc-mode'].includes(n.kind ?? 'text'));
    // after another tag or a finished node, or with a collection or indicator after it on its
    // line, the tag is refused otherwise (not modelled)
    const finished = [
      'tag',
      'flow-seq-end',
      'flow-map-end',
      'double-quoted-scalar',
      'single-quoted-scalar',
      'text',
    ];
    if (finished.includes(previous?.kind ?? 'none')) return null;
    const after = following[0];
    const sameLine = after !== undefined && !BREAK.test(text.slice(t.offset, after.offset));
    if (after?.kind === 'flow-seq-start' || after?.kind === 'flow-map-start') return null;
    if (sameLine && ['seq-item-ind', 'explicit-key-ind', 'map-value-ind'].includes(after.kind ?? 'text'))
      return null;
    const next = following[1];
    return {
      at: next?.offset ?? text.length,
      refusal: marked(
        'ParserError',
        text,
        'while parsing a node',
        t.offset,
        `found undefined tag handle '${handle[1]!}'`,
        t.offset,
      ),
    };
  }
  return null;
}

/**
 * A flow collection still open at the end of the text. PyYAML names the innermost one open
 * ("while parsing a flow sequence … expected ',' or ']', but got '<stream end>'"), or, when the
 * last thing in it asks for a node (`[`, `{`, `,`, `:`, `?`), the node it expected.
 */
function unclosedFlow(text: string, tokens: LexedToken[]): Problem | null {
  const open: LexedToken[] = [];
  let last: LexedToken | undefined;
  for (const t of tokens) {
    if (t.kind === 'flow-seq-start' || t.kind === 'flow-map-start') open.push(t);
    else if (t.kind === 'flow-seq-end' || t.kind === 'flow-map-end') open.pop();
    // a scalar's text follows its `scalar` marker as a token of no kind of its own
    if (!['space', 'newline', 'comment', 'doc-mode', 'scalar'].includes(t.kind ?? 'text')) last = t;
  }
  const inner = open[open.length - 1];
  if (!inner || !last || markerLineAfter(text, inner.offset)) return null;
  if (
    ['flow-seq-start', 'flow-map-start', 'comma', 'map-value-ind', 'explicit-key-ind'].includes(last.kind!)
  ) {
    return {
      at: text.length,
      refusal: marked(
        'ParserError',
        text,
        'while parsing a flow node',
        text.length,
        "expected the node content, but found '<stream end>'",
        text.length,
      ),
    };
  }
  const seq = inner.kind === 'flow-seq-start';
  return {
    at: text.length,
    refusal: marked(
      'ParserError',
      text,
      `while parsing a flow ${seq ? 'sequence' : 'mapping'}`,
      inner.offset,
      `expected ',' or '${seq ? ']' : '}'}', but got '<stream end>'`,
      text.length,
    ),
  };
}

type Token = CST.Token;

const SCALARS = ['scalar', 'single-quoted-scalar', 'double-quoted-scalar'];

/** Where a CST node's first token starts, with that token (properties such as a tag come first). */
function firstToken(item: CST.BlockMap['items'][number]): CST.SourceToken | Token | undefined {
  const props = item.start.filter((t) => t.type !== 'space' && t.type !== 'newline' && t.type !== 'comment');
  if (props[0]) return props[0];
  if (item.key) return item.key;
  return item.sep?.find((t) => t.type !== 'space' && t.type !== 'newline' && t.type !== 'comment');
}

/** How PyYAML names the token a line starts with (its parser's event names). */
function foundName(item: CST.BlockMap['items'][number], first: CST.SourceToken | Token): string | null {
  if (first.type === 'tag') return "'<tag>'";
  const hasValue = item.sep?.some((t) => t.type === 'map-value-ind') ?? false;
  if (first.type === 'map-value-ind') return "':'";
  if (first.type === 'explicit-key-ind') return "'<block mapping start>'";
  if (hasValue) return "'<block mapping start>'";
  if (first.type === 'anchor') return "'<scalar>'"; // Mistral's loader: `&a` starts plain text
  if (SCALARS.includes(first.type)) return "'<scalar>'";
  if (first.type === 'block-seq') return "'<block sequence start>'";
  if (first.type === 'flow-collection') return `'${first.start.source}'`;
  return null;
}

/** Whether only spaces stand between the start of its line and `offset`. */
function startsLine(text: string, offset: number): boolean {
  let i = offset - 1;
  while (i >= 0 && text[i] === ' ') i--;
  return i < 0 || BREAK.test(text[i]!);
}

/** The collection PyYAML is parsing when it meets a stray token: its words and where it starts. */
interface Within {
  context: string | null;
  at: number | null;
}

const IGNORABLE = ['space', 'newline', 'comment'];

/**
 * Tokens PyYAML cannot fit where they stand, found on the `yaml` package's CST:
 * - a line indented deeper than a block mapping's keys that cannot continue the value before it
 *   (that value was quoted, a flow collection, or a plain scalar ended by a comment);
 * - a scalar right after a quoted scalar or a flow collection on the same line (`"a" b`, `[a]b`);
 * - a `:` with no key before it in a block mapping (PyYAML has no empty implicit key).
 * PyYAML ends the collection there: "while parsing a block mapping" (or "block collection"),
 * naming where its first entry starts, then "expected <block end>, but found …"; at the top of a
 * document, "expected '<document start>', but found …".
 */
function strayTokens(text: string, keylessOnly = false): Problem[] {
  const problems: Problem[] = [];
  const report = (within: Within, name: string, offset: number): void => {
    const refusal =
      within.context === null
        ? marked('ParserError', text, null, null, `expected '<document start>', but found ${name}`, offset)
        : marked(
            'ParserError',
            text,
            within.context,
            within.at,
            `expected <block end>, but found ${name}`,
            offset,
          );
    problems.push({ at: offset, refusal });
  };
  const mappingValueHere = (offset: number): Problem => ({
    at: offset,
    refusal: marked('ScannerError', text, null, null, 'mapping values are not allowed here', offset),
  });
  const strayIn = (tokens: Token[] | undefined, within: Within): void => {
    const stray = tokens?.find((t) => !IGNORABLE.includes(t.type));
    // the yaml package reads U+2028, U+2029 and U+0085 as text; PyYAML breaks the line there
    if (
      !keylessOnly &&
      stray &&
      SCALARS.includes(stray.type) &&
      'source' in stray &&
      !/^[\x85\u2028\u2029\s]*$/.test(stray.source)
    )
      report(within, "'<scalar>'", stray.offset);
  };
  const visit = (node: Token | null | undefined, within: Within): void => {
    if (!node) return;
    if (node.type === 'document') return visit(node.value, { context: null, at: null });
    if (
      node.type === 'scalar' ||
      node.type === 'single-quoted-scalar' ||
      node.type === 'double-quoted-scalar'
    )
      return strayIn(node.end, within);
    if (node.type === 'flow-collection') return strayIn(node.end.slice(1), within);
    if (node.type === 'block-seq') {
      const first = node.items[0]?.start[0];
      const inner: Within = { context: 'while parsing a block collection', at: first?.offset ?? node.offset };
      for (const item of node.items) visit(item.value, inner);
      return;
    }
    if (node.type !== 'block-map') return;
    const first0 = node.items[0] && firstToken(node.items[0]);
    const inner: Within = { context: 'while parsing a block mapping', at: first0?.offset ?? node.offset };
    for (let k = 0; k < node.items.length; k++) {
      const item = node.items[k]!;
      const first = firstToken(item);
      if (first?.type === 'map-value-ind') report(inner, "':'", first.offset);
      else if (
        !keylessOnly &&
        k > 0 &&
        first &&
        startsLine(text, first.offset) &&
        column(text, first.offset) > node.indent
      ) {
        const previous = node.items[k - 1]!;
        const name = foundName(item, first);
        const prevValue = previous.value;
        const hadValue = previous.sep?.some((t) => t.type === 'map-value-ind') ?? false;
        if (
          name &&
          hadValue &&
          prevValue &&
          prevValue.type !== 'alias' &&
          !('source' in prevValue && prevValue.source.startsWith('@'))
        )
          report(inner, name, first.offset);
      }
      const valueAt = item.sep?.findIndex((t) => t.type === 'map-value-ind') ?? -1;
      const colon = valueAt >= 0 ? item.sep![valueAt]! : undefined;
      if (!keylessOnly && colon) {
        // a plain key over several lines (`a\nb: c`, `a: b\n  c: d`), or a mapping opened on the
        // line of its parent's `:` (`x: y: z`): PyYAML's scanner takes no key there
        const nested = item.value?.type === 'block-map' && !item.sep!.some((t) => t.type === 'newline');
        const nestedColon = nested
          ? (item.value as CST.BlockMap).items[0]?.sep?.find((t) => t.type === 'map-value-ind')
          : undefined;
        if (item.key?.type === 'scalar' && /[\n\r\x85\u2028\u2029]/.test(item.key.source))
          problems.push(mappingValueHere(colon.offset));
        if (nestedColon) problems.push(mappingValueHere(nestedColon.offset));
      }
      if (item.key && valueAt > 0) strayIn(item.sep!.slice(0, valueAt), inner);
      visit(item.key, inner);
      visit(item.value, inner);
    }
  };
  for (const token of new Parser().parse(text)) visit(token, { context: null, at: null });
  return problems;
}

/** The column (in UTF-16 units) of `offset` on its line. */
function column(text: string, offset: number): number {
  let i = offset;
  while (i > 0 && !BREAK.test(text[i - 1]!)) i--;
  return offset - i;
}

/**
 * What PyYAML refuses in a document the `yaml` package reads: a `:` opening an entry of a block
 * mapping with no key before it (`: x`, `a: 1\n: x`; the `yaml` package reads a null key), checked
 * where a line (after indentation and `- `) starts with `: `, and a tab between tokens.
 */
export function readDocumentRefusal(text: string): PyYamlRefusal | null {
  const problems: Problem[] = [];
  if (/(?:^|[\n\r\x85\u2028\u2029])[ ]*(?:-[ ]+)*:(?:[ \t\n\r\x85\u2028\u2029]|$)/.test(text))
    problems.push(...strayTokens(text, true));
  const tab = text.includes('\t') ? tabBetweenTokens(text, lex(text)) : null;
  if (tab) problems.push(tab);
  problems.sort((x, y) => x.at - y.at);
  return problems[0]?.refusal ?? null;
}

/**
 * PyYAML's words for a document the `yaml` package refused, when the problem PyYAML meets first
 * is one modelled here; null keeps the `yaml` package's message.
 */
export function parserRefusal(text: string): PyYamlRefusal | null {
  const tokens = lex(text);
  const problems = [
    quotedScalar(text, tokens),
    blockScalarHeader(text, tokens),
    tabBetweenTokens(text, tokens),
    misplacedIndicator(text, tokens),
    strayFlowIndicator(text, tokens),
    unclosedFlow(text, tokens),
    ...strayTokens(text),
    // last: on a tie the scanner's problem with the token after the tag comes first
    undefinedTagHandle(text, tokens),
  ].filter((p): p is Problem => p !== null);
  problems.sort((a, b) => a.at - b.at);
  return problems[0]?.refusal ?? null;
}
