import { validateExpressions } from '@osc/expressions';

/**
 * Recognition and syntax checking of expressions inside definition strings (DSL-8.1, DSL-8.6).
 * The YAQL/Jinja grammars live in `@osc/expressions` (`validateExpressions`, the default); the check is
 * pluggable, and a cheaper delimiter/bracket/quote balance check ({@link checkBalancedDelimiters}) exists
 * for callers that want no grammar check.
 */

/** Returns the syntax errors of every expression found in `text` (empty when fine). */
export type ExpressionValidator = (text: string) => string[];

/** YAQL inline expression, shortest match, no line breaks (Mistral `INLINE_YAQL_REGEXP`). */
export const YAQL_INLINE_PATTERN = /<%.*?%>/;
/** Jinja expression or block (Mistral `ANY_JINJA_REGEXP`). */
export const JINJA_ANY_PATTERN = /\{\{.*\}\}|\{%.*%\}/;

const WHOLE_YAQL = /^<%.*?%>\s*$/;
const WHOLE_JINJA = /^(\{\{(.*?)\}\})\s*$/;

/**
 * True when the whole string is one expression (Mistral's `EXPRESSION` schema type: policy values,
 * conditions, `break-on`). Note that `<% a %> and <% b %>` also qualifies, as in the reference.
 */
export const isExpression = (value: unknown): value is string =>
  typeof value === 'string' && (WHOLE_YAQL.test(value) || WHOLE_JINJA.test(value));

export const containsYaql = (text: string): boolean => YAQL_INLINE_PATTERN.test(text);
export const containsJinja = (text: string): boolean => JINJA_ANY_PATTERN.test(text);

const OPENERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' };
const CLOSERS = new Set([')', ']', '}']);

/** Brackets and quotes balanced inside one expression body; `quotes` are the string delimiters of the language. */
const checkBody = (body: string, language: string, quotes: string): string | undefined => {
  const stack: string[] = [];
  let quote: string | undefined;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (quote) {
      if (ch === '\\' && quote !== '`') i++;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (quotes.includes(ch)) quote = ch;
    else if (OPENERS[ch]) stack.push(OPENERS[ch]);
    else if (CLOSERS.has(ch)) {
      const expected = stack.pop();
      if (expected !== ch) return `unexpected '${ch}' in ${language} expression`;
    }
  }
  if (quote) return `unterminated string in ${language} expression`;
  const open = stack.pop();
  if (open) return `missing '${open}' in ${language} expression`;
  if (!body.trim()) return `empty ${language} expression`;
  return undefined;
};

/**
 * The default validator: every `<%` is closed by `%>` on the same line, every `{{` by `}}` and `{%` by `%}`,
 * and inside each expression brackets and quotes balance and something is written.
 */
export const checkBalancedDelimiters: ExpressionValidator = (text) => {
  const errors: string[] = [];
  if (containsJinja(text) && containsYaql(text)) {
    errors.push(
      "The line already contains an expression of type 'jinja'. Mixing expression types in a single line is not allowed.",
    );
  }
  const scan = (open: string, close: string, language: string, quotes: string): void => {
    let from = 0;
    for (;;) {
      const start = text.indexOf(open, from);
      if (start < 0) return;
      const end = text.indexOf(close, start + open.length);
      const lineEnd = text.indexOf('\n', start);
      if (end < 0 || (lineEnd >= 0 && lineEnd < end && language === 'YAQL')) {
        errors.push(`${language} expression is not closed with '${close}' [expression=${text.slice(start)}]`);
        return;
      }
      const body = text.slice(start + open.length, end);
      const problem = checkBody(body, language, quotes);
      if (problem)
        errors.push(
          `Invalid ${language} expression: ${problem} [expression=${text.slice(start, end + close.length)}]`,
        );
      from = end + close.length;
    }
  };
  scan('<%', '%>', 'YAQL', `'"\``);
  scan('{{', '}}', 'Jinja', `'"`);
  scan('{%', '%}', 'Jinja', `'"`);
  return errors;
};

/** The default check: the YAQL and Jinja grammars of `@osc/expressions` (mixing languages is an error too). */
export const grammarCheck: ExpressionValidator = (text) => validateExpressions(text);

let installed: ExpressionValidator = grammarCheck;

/**
 * Replaces the expression syntax check process-wide; without an argument the grammar check of
 * `@osc/expressions` is restored. Meant for start-up configuration and tests.
 */
export const setExpressionValidator = (fn?: ExpressionValidator): void => {
  installed = fn ?? grammarCheck;
};

export const getExpressionValidator = (): ExpressionValidator => installed;

/**
 * Mistral `expr.validate` for one value: the validator's messages (duplicates dropped). Non-strings and
 * strings without any delimiter are accepted without calling the validator.
 */
export const validateExpressionText = (
  text: unknown,
  validator: ExpressionValidator = installed,
): string[] => {
  if (typeof text !== 'string') return [];
  if (!text.includes('<%') && !text.includes('{{') && !text.includes('{%')) return [];
  try {
    return [...new Set(validator(text))];
  } catch (e) {
    // A validator must answer with messages; if it fails, the definition is still rejected cleanly.
    return [`Expression could not be validated [expression=${text}, error=${(e as Error).message}]`];
  }
};
