import { parseAction } from './action-parser';
import { type DslIssue, DslValidationError } from './dsl-validation-error';
import { type ExpressionValidator, getExpressionValidator } from './expression-syntax';
import { type ActionSpec, DSL_VERSION, type WorkbookSpec, type WorkflowSpec } from './model';
import { pyStr } from './python-text';
import { type JsonMap, type Path, ValidationContext, isMap } from './validation-context';
import { workbookMemberText, workflowDefinitionText } from './definition-text';
import { type PathSegment, loadYaml } from './yaml-loader';
import { parseWorkflow } from './workflow-parser';

export interface ParseOptions {
  /**
   * false = the API's `skip_validation`: only what is needed to build the model is checked (YAML syntax,
   * version, structure and types); semantic checks (unknown transition targets, joins, start tasks, ...)
   * and expression syntax are skipped. Default true.
   */
  readonly validate?: boolean;
  /** Overrides the process-wide expression validator (see `setExpressionValidator`). */
  readonly expressionValidator?: ExpressionValidator;
}

export interface ParsedWorkflows {
  readonly workflows: readonly WorkflowSpec[];
  /**
   * Stored definition text per workflow name (DSL-1.6): the submitted text for a single-workflow document,
   * otherwise each workflow alone re-serialised with `version`.
   */
  readonly definitions: Readonly<Record<string, string>>;
}

/** Python `float(v) == 2.0` for a version value (DSL-1.2). */
export const isSupportedVersion = (v: unknown): boolean => {
  if (typeof v === 'number') return v === 2;
  if (typeof v !== 'string') return false;
  const s = v.trim().replace(/(?<=\d)_(?=\d)/g, '');
  return /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(s) && Number(s) === 2;
};

const finish = (ctx: ValidationContext, validate: boolean): void => {
  const issues: DslIssue[] = validate
    ? ctx.issues
    : ctx.issues.filter((i) => i.kind === 'schema' || i.kind === 'version');
  if (issues.length > 0) throw new DslValidationError(issues);
};

const makeContext = (text: string, toSource: (p: Path) => Path, options: ParseOptions) => {
  const { value, positions } = loadYaml(text);
  const validate = options.validate ?? true;
  const ctx = new ValidationContext(
    positions,
    toSource,
    validate ? (options.expressionValidator ?? getExpressionValidator()) : undefined,
  );
  return { value, ctx, validate, positions };
};

/** Top level of a workflow or action list: a map with `version` and at least one item. */
const checkListTop = (ctx: ValidationContext, value: unknown): value is JsonMap => {
  if (!isMap(value)) {
    ctx.typeError([], value, 'object');
    return false;
  }
  if (!('version' in value)) ctx.schema([], "'version' is a required property");
  else if (!isSupportedVersion(value.version)) ctx.add('version', ['version'], pyStr(value.version));
  if (Object.keys(value).filter((k) => k !== 'version').length === 0) {
    ctx.schema([], 'At least one item must be in the list.');
  }
  return true;
};

const listSource =
  (section: string) =>
  (p: Path): Path =>
    p[0] === section ? p.slice(1) : p;

/**
 * Parses and validates a workflow list document (`version: '2.0'` plus one or more workflows, DSL-1).
 * Throws {@link DslValidationError} listing every issue with its path (`workflows.<name>...`).
 */
export const parseWorkflows = (text: string, options: ParseOptions = {}): ParsedWorkflows => {
  const { value, ctx, validate, positions } = makeContext(text, listSource('workflows'), options);
  const workflows: WorkflowSpec[] = [];
  if (checkListTop(ctx, value)) {
    for (const [name, data] of Object.entries(value)) {
      if (name === 'version') continue;
      const wf = parseWorkflow(ctx, ['workflows', name], name, name, data);
      if (wf) workflows.push(wf);
    }
  }
  finish(ctx, validate);
  const definitions: Record<string, string> = {};
  const map = value as JsonMap;
  for (const wf of workflows) {
    definitions[wf.name] =
      workflows.length === 1
        ? text
        : workflowDefinitionText(map.version, wf.name, map[wf.name], (p) => positions.isIntegralFloat(p));
  }
  return { workflows, definitions };
};

/** Parses and validates an ad-hoc action list document (DSL-7.1). Paths are `actions.<name>...`. */
export const parseActions = (text: string, options: ParseOptions = {}): ActionSpec[] => {
  const { value, ctx, validate } = makeContext(text, listSource('actions'), options);
  const actions: ActionSpec[] = [];
  if (checkListTop(ctx, value)) {
    for (const [name, data] of Object.entries(value)) {
      if (name === 'version') continue;
      const action = parseAction(ctx, ['actions', name], name, name, data);
      if (action) actions.push(action);
    }
  }
  finish(ctx, validate);
  return actions;
};

const WORKBOOK_KEYS = new Set(['version', 'name', 'description', 'tags', 'workflows', 'actions']);
const MEMBER_NAME = /^[\p{L}\p{N}_-]+$/u;

const workbookSection = <T>(
  ctx: ValidationContext,
  data: JsonMap,
  section: 'workflows' | 'actions',
  parseMember: (path: Path, name: string, member: unknown) => T | undefined,
): T[] => {
  if (!(section in data)) return [];
  const value = data[section];
  if (!ctx.map([section], value)) return [];
  const out: T[] = [];
  for (const [name, member] of Object.entries(value)) {
    const path: PathSegment[] = [section, name];
    if (name === 'version') {
      if (!isSupportedVersion(member)) ctx.add('version', path, pyStr(member));
      continue;
    }
    if (!MEMBER_NAME.test(name)) {
      ctx.schema(path, `'${name}' does not match '^[\\w-]+$' (workbook member names)`, 'key');
      continue;
    }
    const parsed = parseMember(path, name, member);
    if (parsed) out.push(parsed);
  }
  return out;
};

/**
 * Parses and validates a workbook (DSL-7.4): `version`, `name`, `description`, `tags`, `workflows`,
 * `actions`. Members get full names `<workbook>.<name>`; paths are `workflows.<name>...`/`actions.<name>...`.
 */
export const parseWorkbook = (text: string, options: ParseOptions = {}): WorkbookSpec => {
  const { value, ctx, validate } = makeContext(text, (p) => p, options);
  let workbook: WorkbookSpec | undefined;
  if (!isMap(value)) {
    ctx.typeError([], value, 'object');
  } else {
    const data = value;
    ctx.knownKeys([], data, WORKBOOK_KEYS);
    if (!('version' in data)) ctx.schema([], "'version' is a required property");
    else if (!isSupportedVersion(data.version)) ctx.add('version', ['version'], pyStr(data.version));
    let name = '';
    if (ctx.required([], data, 'name') && ctx.nonEmptyString(['name'], data.name)) name = data.name;
    if (name && /\s/.test(name))
      ctx.semantic(['name'], `Workbook name must not contain spaces [name=${name}]`);
    let description: string | undefined;
    if ('description' in data && ctx.nonEmptyString(['description'], data.description))
      description = data.description;
    let tags: string[] = [];
    if ('tags' in data && ctx.uniqueStringList(['tags'], data.tags)) tags = data.tags;
    const actions = workbookSection(ctx, data, 'actions', (path, n, m) =>
      parseAction(ctx, path, n, `${name}.${n}`, m),
    );
    const workflows = workbookSection(ctx, data, 'workflows', (path, n, m) =>
      parseWorkflow(ctx, path, n, `${name}.${n}`, m),
    );
    workbook = {
      version: DSL_VERSION,
      name,
      ...(description !== undefined ? { description } : {}),
      tags,
      workflows,
      actions,
    };
  }
  finish(ctx, validate);
  if (!workbook) throw new DslValidationError(ctx.issues);
  return workbook;
};

export interface WorkbookMemberDefinitions {
  /** Stored definition text per member full name (`<workbook>.<name>`). */
  readonly workflows: Readonly<Record<string, string>>;
  readonly actions: Readonly<Record<string, string>>;
}

/**
 * The definition text Mistral stores for each member of a workbook: the member's lines cut from the
 * workbook text (see {@link workbookMemberText}), or, when they cannot be located, the member re-serialised.
 * `workbook` is the result of {@link parseWorkbook} on the same text.
 */
export const workbookMemberDefinitions = (
  text: string,
  workbook: WorkbookSpec,
): WorkbookMemberDefinitions => {
  const raw = loadYaml(text).value as JsonMap;
  const prefix = `${workbook.name}.`;
  const memberText = (section: 'workflows' | 'actions', fullName: string): string => {
    const short = fullName.slice(prefix.length);
    const members = (isMap(raw[section]) ? raw[section] : {}) as JsonMap;
    return (
      workbookMemberText(text, section, short) ?? workflowDefinitionText(DSL_VERSION, short, members[short])
    );
  };
  const workflows: Record<string, string> = {};
  for (const wf of workbook.workflows) workflows[wf.name] = memberText('workflows', wf.name);
  const actions: Record<string, string> = {};
  for (const a of workbook.actions) actions[a.name] = memberText('actions', a.name);
  return { workflows, actions };
};

export type DefinitionKind = 'workflows' | 'workbook' | 'actions';

/**
 * Non-throwing check of a definition (the API's `/validate` endpoints): the issues that parsing would
 * report, or an empty list when the definition is valid. Errors other than validation errors propagate.
 */
export const validateDefinition = (
  kind: DefinitionKind,
  text: string,
  options: ParseOptions = {},
): readonly DslIssue[] => {
  try {
    if (kind === 'workflows') parseWorkflows(text, options);
    else if (kind === 'workbook') parseWorkbook(text, options);
    else parseActions(text, options);
    return [];
  } catch (e) {
    if (e instanceof DslValidationError) return e.issues;
    throw e;
  }
};
