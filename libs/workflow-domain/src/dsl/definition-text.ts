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
  input.map((p) => (p.required ? p.name : `${p.name}="${pyStr(p.default ?? null)}"`)).join(', ');

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

/**
 * YAML text in the style of PyYAML's `safe_dump(..., sort_keys=False)`: block style, sequences not
 * indented under their key, single quotes where quoting is needed (`'2.0'`, `'yes'`), no aliases.
 * Not byte-identical to PyYAML for non-ASCII text (kept as is) and multi-line strings (always quoted).
 */
export const dumpYaml = (value: unknown): string =>
  stringify(value, {
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
  });

/**
 * DSL-1.6: one workflow of a multi-workflow document, stored alone: `{version, <name>: ...}` as YAML.
 * `versionSource` (the version as written) keeps a float version a float: `version: 2.0` stays `2.0`.
 */
export const workflowDefinitionText = (
  version: unknown,
  name: string,
  data: unknown,
  versionSource?: string,
): string => {
  let v: unknown = version;
  if (
    typeof version === 'number' &&
    Number.isInteger(version) &&
    versionSource &&
    /[.eE]/.test(versionSource)
  ) {
    const node = new Scalar(version);
    node.format = PY_FLOAT_FORMAT;
    v = node;
  }
  return dumpYaml({ version: v, [name]: data });
};

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
