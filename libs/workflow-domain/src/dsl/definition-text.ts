import { Scalar, stringify } from 'yaml';
import { inputListEntries } from './input-list';
import { type ActionSpec, type InputParameter, type WorkflowSpec } from './model';
import { pyJsonDumps, pyStr } from './python-text';
import { PY_FLOAT_FORMAT, customTags } from './yaml-loader';

/**
 * A workflow's `input` as the API shows it: `a, b="2", c="None", d="{'k': 'v'}"` — bare names for required
 * parameters, `name="<Python str(default)>"` for optional ones, joined by `, ` (empty string when none).
 */
export const renderInputString = (input: readonly InputParameter[]): string =>
  input
    .map((p) => (p.required ? p.name : `${p.name}="${p.defaultText ?? pyStr(p.default ?? null)}"`))
    .join(', ');

/** The API's `interface` of a workflow: the input list as written and the output keys. */
export const workflowInterface = (
  wf: Pick<WorkflowSpec, 'input' | 'output'>,
): { input: unknown[]; output: string[] } => ({
  input: inputListEntries(wf.input),
  output: Object.keys(wf.output ?? {}),
});

/**
 * An ad-hoc action's `input` string (DSL-7.1): `p1, p2=<json.dumps(default)>`, or null when it declares no
 * input (Mistral stores None then).
 */
export const actionInputString = (action: Pick<ActionSpec, 'input'>): string | null =>
  action.input.length === 0
    ? null
    : action.input
        .map((p) => (p.required ? p.name : `${p.name}=${pyJsonDumps(p.default ?? null)}`))
        .join(', ');

// PyYAML (allow_unicode=False) writes every non-ASCII character as an escape inside a double-quoted
// scalar: `"h\xE9llo"`, `"\u0439"`, `"\U0001F600"`. The yaml package keeps such characters as they are,
// so they are swapped for a control-character marker (which forces double quotes and survives as
// `\x01<hex>\x02`) and the markers are turned into PyYAML's escapes afterwards.
const MARK_OPEN = '\u0001';
const MARK_CLOSE = '\u0002';

/** PyYAML's short escapes among the characters marked here. */
const PYYAML_NAMED_ESCAPES: Readonly<Record<number, string>> = {
  0x85: '\\N',
  0xa0: '\\_',
  0x2028: '\\L',
  0x2029: '\\P',
};

const markNonAscii = (s: string): string =>
  s.replace(
    /[\u007f-\u{10ffff}]/gu,
    (ch) => `${MARK_OPEN}${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase()}${MARK_CLOSE}`,
  );

type FloatPaths = (path: readonly (string | number)[]) => boolean;

const markDeep = (value: unknown, isFloat?: FloatPaths, path: readonly (string | number)[] = []): unknown => {
  if (typeof value === 'string') return markNonAscii(value);
  if (typeof value === 'number' && Number.isInteger(value) && isFloat?.(path)) {
    const node = new Scalar(value);
    node.format = PY_FLOAT_FORMAT;
    return node;
  }
  if (Array.isArray(value)) return value.map((v, i) => markDeep(v, isFloat, [...path, i]));
  if (value !== null && typeof value === 'object' && !(value instanceof Scalar)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [markNonAscii(k), markDeep(v, isFloat, [...path, k])]),
    );
  }
  return value;
};

const unmark = (text: string): string =>
  text.replace(/\\x01([0-9A-F]+)\\x02/g, (_m, hex: string) => {
    const code = parseInt(hex, 16);
    const named = PYYAML_NAMED_ESCAPES[code];
    if (named) return named;
    if (code < 0x100) return `\\x${hex.padStart(2, '0')}`;
    if (code <= 0xffff) return `\\u${hex.padStart(4, '0')}`;
    return `\\U${hex.padStart(8, '0')}`;
  });

/**
 * YAML text in the style of PyYAML's `safe_dump(..., sort_keys=False)`: block style, sequences not
 * indented under their key, single quotes where quoting is needed (`'2.0'`, `'yes'`), no aliases,
 * non-ASCII characters escaped in double quotes. Line folding of long strings may break at a different
 * space than PyYAML's.
 */
export const dumpYaml = (value: unknown, isFloat?: FloatPaths): string =>
  unmark(
    stringify(markDeep(value, isFloat), {
      version: '1.1',
      schema: 'yaml-1.1',
      customTags,
      indentSeq: false,
      singleQuote: true,
      blockQuote: false,
      lineWidth: 80,
      minContentWidth: 0,
      aliasDuplicateObjects: false,
      nullStr: 'null',
      trueStr: 'true',
      falseStr: 'false',
    }),
  );

/**
 * DSL-1.6: one workflow of a multi-workflow document, stored alone: `{version, <name>: ...}` as YAML.
 * `isFloat(path)` (paths as in that document, e.g. `['version']`) names the integral numbers that were
 * written as floats, so that `version: 2.0` stays `2.0`.
 */
export const workflowDefinitionText = (
  version: unknown,
  name: string,
  data: unknown,
  isFloat?: FloatPaths,
): string => dumpYaml({ version, [name]: data }, isFloat);

/**
 * The text of one member of a workbook as Mistral stores it for the member's own definition: the lines
 * from `<name>:` inside the `workflows:`/`actions:` section, up to the next line indented no deeper than
 * the name, with the name's indentation removed. Returns undefined when the member cannot be located in
 * the text (e.g. a flow-style workbook); callers then fall back to {@link workflowDefinitionText}.
 */
export const workbookMemberText = (
  text: string,
  section: 'workflows' | 'actions',
  name: string,
): string | undefined => {
  const sectionAt = text.indexOf(`${section}:`);
  if (sectionAt < 0) return undefined;
  const lines = text.slice(sectionAt).split(/(?<=\n)/);
  lines.shift();
  const header = `${name}:`;
  let indent = -1;
  const out: string[] = [];
  let i = 0;
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === header) {
      indent = line.indexOf(header);
      out.push(line.trimStart());
      i++;
      break;
    }
  }
  if (indent < 0) return undefined;
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    const stripped = line.trim();
    if (!stripped) {
      out.push(line);
    } else if (stripped.startsWith('#')) {
      out.push(indent > line.indexOf('#') ? line : line.slice(indent));
    } else {
      const lead = line.length - line.trimStart().length;
      if (indent < lead) out.push(line.slice(indent));
      else break;
    }
  }
  return `${out.join('').trimEnd()}\n`;
};
