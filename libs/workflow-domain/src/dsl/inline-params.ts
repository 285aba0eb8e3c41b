/**
 * Inline parameters of `action:`/`workflow:`/`base:` values, transition targets and one-line `retry`, as
 * Mistral parses them (DSL-3.2, DSL-3.3): `std.echo output="hi" n=1 list=[1, 2] flag=true x=<% $.x %>`.
 *
 * Reference rules reproduced here (they are surprising, keep them):
 * - a string without a space character is a name only, whatever else it contains;
 * - the name is the leading `[\w.]+[^=(\s"]*` run, or a leading `<% … %>` / `{{ … }}` / `{% … %}`;
 * - parameters are every `key=value` found anywhere in the string (keys `[-_\w]+`), where the value is
 *   recognised only as a `"…"` or `'…'` string (quotes removed, no escapes), an expression, a bracketed
 *   `[…]` (greedy up to the last `]`, JSON-decoded when valid), `true`, `false`, `null` or a run of digits
 *   (`x=1.5` gives 1, `x=trueish` gives true); any other value is silently ignored;
 * - a later duplicate key wins.
 */

const WORD = '[\\p{L}\\p{N}_]';
const PARAM_VALUE = `"[^"]*"\\s*|'[^']*'\\s*|\\{\\{.*?\\}\\}|<%.*?%>|\\[.*\\]\\s*|true|false|null|\\d+`;
const PARAMS_PATTERN = new RegExp(`([-_\\p{L}\\p{N}]+)=(${PARAM_VALUE})`, 'gu');
const COMMAND_PATTERN = new RegExp(`^(?:[.\\p{L}\\p{N}_]+[^=(\\s"]*|<%.*?%>|\\{\\{.*\\}\\}|\\{%.*%\\})`, 'u');
const FUNCTION_FORM = new RegExp(`^${WORD}+\\(.*\\)$`, 'u');

export type InlineParams = Record<string, unknown>;

export type ParsedCommand =
  | { readonly ok: true; readonly name: string; readonly params: InlineParams }
  | { readonly ok: false; readonly error: string };

const decodeValue = (raw: string): unknown => {
  const v = raw.trim();
  if (v.startsWith('"') || v.startsWith("'")) return v.slice(1, -1);
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
};

/** Every `key=value` of the string, decoded as Mistral does. */
export const findInlineParams = (text: string): InlineParams => {
  const params: InlineParams = {};
  for (const m of text.matchAll(PARAMS_PATTERN)) {
    const key = m[1];
    const value = m[2];
    if (key !== undefined && value !== undefined) params[key] = decodeValue(value);
  }
  return params;
};

/** Mistral `_parse_cmd_and_input`: the name and the inline parameters of `text`. */
export const parseCommand = (text: string): ParsedCommand => {
  if (!text.includes(' ')) return { ok: true, name: text, params: {} };
  const m = COMMAND_PATTERN.exec(text);
  if (!m) return { ok: false, error: `Invalid action/workflow task property: ${text}` };
  return { ok: true, name: m[0], params: findInlineParams(text) };
};

/**
 * A transition target (`task1`, `fail msg="x"`, `fail(msg="x")`). Deliberate deviation: the reference
 * reads `fail(msg="x")` written without any space as a task name (then `Task ... not found.`); DSL-4.2
 * accepts the function form, so it is parsed as command + parameters whether or not it has spaces.
 */
export const parseTransitionTarget = (text: string): ParsedCommand => {
  if (!text.includes(' ') && FUNCTION_FORM.test(text)) {
    return { ok: true, name: text.slice(0, text.indexOf('(')), params: findInlineParams(text) };
  }
  return parseCommand(text);
};
