/**
 * A small YAML highlighter for workflow definitions: it splits each line into tokens to colour,
 * without parsing YAML (the text shown is always exactly the stored text). It knows comments,
 * mapping keys, list dashes, quoted strings, YAQL (`<% … %>`) and Jinja (`{{ … }}`) expressions,
 * numbers, booleans and null. Pure: no DOM.
 */

export const TOKEN_KINDS = [
  'plain',
  'comment',
  'key',
  'dash',
  'string',
  'expression',
  'number',
  'literal',
] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export interface Token {
  readonly text: string;
  readonly kind: TokenKind;
}

const SCALAR_RULES: readonly [RegExp, TokenKind][] = [
  [/^<%.*?%>/, 'expression'],
  [/^\{\{.*?\}\}/, 'expression'],
  [/^\{%.*?%\}/, 'expression'],
  [/^"(?:[^"\\]|\\.)*"?/, 'string'],
  [/^'(?:[^']|'')*'?/, 'string'],
  [/^#.*/, 'comment'],
  [/^(?:true|false|null|True|False|~)(?=[\s,\]}]|$)/, 'literal'],
  [/^-?\d+(?:\.\d+)?(?=[\s,\]}]|$)/, 'number'],
];

/** Tokens of a value (after `key:` or `- `): expressions and strings win over plain words. */
function valueTokens(text: string): Token[] {
  const out: Token[] = [];
  let plain = '';
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const atWordStart = i === 0 || /[\s,[{]/.test(text[i - 1] ?? '');
    let matched: Token | null = null;
    for (const [re, kind] of SCALAR_RULES) {
      if ((kind === 'comment' || kind === 'literal' || kind === 'number') && !atWordStart) continue;
      const m = re.exec(rest);
      if (m && m[0].length > 0) {
        matched = { text: m[0], kind };
        break;
      }
    }
    if (matched) {
      if (plain) out.push({ text: plain, kind: 'plain' });
      plain = '';
      out.push(matched);
      i += matched.text.length;
    } else {
      plain += text[i];
      i += 1;
    }
  }
  if (plain) out.push({ text: plain, kind: 'plain' });
  return out;
}

/** Tokens of one line; joined, their texts give the line back unchanged. */
export function yamlLineTokens(line: string): Token[] {
  const out: Token[] = [];
  const indent = /^\s*/.exec(line)?.[0] ?? '';
  if (indent) out.push({ text: indent, kind: 'plain' });
  let rest = line.slice(indent.length);
  while (rest.startsWith('- ') || rest === '-') {
    out.push({ text: '-', kind: 'dash' });
    const space = /^-(\s*)/.exec(rest)?.[1] ?? '';
    if (space) out.push({ text: space, kind: 'plain' });
    rest = rest.slice(1 + space.length);
  }
  if (rest.startsWith('#')) return [...out, { text: rest, kind: 'comment' }];
  const key = /^((?:"[^"]*"|'[^']*'|[^\s#'"{[<][^:#]*?))(\s*:)(?=\s|$)/.exec(rest);
  if (key) {
    out.push({ text: key[1] ?? '', kind: 'key' }, { text: key[2] ?? '', kind: 'plain' });
    rest = rest.slice(key[0].length);
  }
  return [...out, ...valueTokens(rest)];
}

/** Tokens of every line of a definition. */
export const yamlTokens = (text: string): Token[][] => text.split('\n').map(yamlLineTokens);
