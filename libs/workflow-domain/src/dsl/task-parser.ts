import { parseCommand } from './inline-params';
import {
  DEFAULT_ACTION,
  type TaskDefaultsSpec,
  type TaskPolicies,
  type TaskSpec,
  TRANSITION_EVENTS,
  type Transition,
  type TransitionClause,
  type TransitionEvent,
  type WithItemsVariable,
  type WorkflowType,
} from './model';
import { mergePolicies, parsePolicies } from './policies';
import { type TransitionSources, parseClause } from './transitions';
import {
  type JsonMap,
  type Path,
  type ValidationContext,
  WORD_NAME,
  isMap,
  shortRepr,
} from './validation-context';

/** DSL-1.5 */
export const MAX_TASK_NAME_LENGTH = 255;
export const MAX_JOIN_TASK_NAME_LENGTH = MAX_TASK_NAME_LENGTH - 47;

const POLICY_KEYS = [
  'retry',
  'wait-before',
  'wait-after',
  'timeout',
  'pause-before',
  'concurrency',
  'fail-on',
];
const COMMON_TASK_KEYS = [
  'description',
  'tags',
  'action',
  'workflow',
  'input',
  'publish',
  'publish-on-error',
  'publish-on-skip',
  'with-items',
  'keep-result',
  'target',
  'safe-rerun',
  ...POLICY_KEYS,
];
const DIRECT_ONLY = ['join', ...TRANSITION_EVENTS];
const REVERSE_ONLY = ['requires'];
const TASK_KEYS: Readonly<Record<WorkflowType, ReadonlySet<string>>> = {
  direct: new Set([...COMMON_TASK_KEYS, ...DIRECT_ONLY]),
  reverse: new Set([...COMMON_TASK_KEYS, ...REVERSE_ONLY]),
};
const TASK_DEFAULTS_KEYS = new Set([...POLICY_KEYS, ...TRANSITION_EVENTS, 'requires', 'safe-rerun']);

const misuseHint =
  (type: WorkflowType) =>
  (key: string): string | undefined => {
    if (type === 'reverse' && DIRECT_ONLY.includes(key))
      return `('${key}' is only allowed in direct workflows)`;
    if (type === 'direct' && REVERSE_ONLY.includes(key))
      return `('${key}' is only allowed in reverse workflows)`;
    return undefined;
  };

const WITH_ITEMS_PATTERN = /^\s*([\p{L}\p{N}_-]+)\s*in\s*(\[.+\]|<%.*?%>|\{\{.*?\}\})/u;

/** `with-items` (DSL-14.8): `var in [json list]` or `var in <expression>`, one string or a list of them. */
const parseWithItems = (ctx: ValidationContext, path: Path, value: unknown): WithItemsVariable[] => {
  const items = ctx.stringOrList(path, value);
  if (!items) return [];
  const out: WithItemsVariable[] = [];
  const atOf = (i: number): Path => (Array.isArray(value) ? [...path, i] : path);
  items.forEach((item, i) => {
    const m = WITH_ITEMS_PATTERN.exec(item);
    if (!m || m[1] === undefined || m[2] === undefined) {
      ctx.schema(
        atOf(i),
        `Wrong format of 'with-items' property. Please use format 'var in {[some, list] | <% $.array %> }': ${item}`,
      );
      return;
    }
    const source = m[2];
    if (source.startsWith('[')) {
      try {
        const list = JSON.parse(source) as unknown;
        if (!Array.isArray(list)) throw new Error('not a list');
        out.push({ variable: m[1], source: list });
      } catch (e) {
        ctx.schema(
          atOf(i),
          `Invalid array in 'with-items' clause: ${source}, error: ${(e as Error).message}`,
        );
      }
      return;
    }
    if (ctx.expressions(atOf(i), source)) out.push({ variable: m[1], source });
  });
  return out;
};

const parseClauses = (
  ctx: ValidationContext,
  path: Path,
  data: JsonMap,
  sources: TransitionSources,
): Partial<Record<TransitionEvent, TransitionClause>> => {
  const clauses: Partial<Record<TransitionEvent, TransitionClause>> = {};
  for (const event of TRANSITION_EVENTS) {
    if (!(event in data)) continue;
    const clause = parseClause(ctx, [...path, event], data[event], sources);
    if (clause) clauses[event] = clause;
  }
  return clauses;
};

const parseRequires = (ctx: ValidationContext, path: Path, data: JsonMap): string[] =>
  'requires' in data ? (ctx.stringOrList([...path, 'requires'], data.requires) ?? []) : [];

/** Where a `requires` entry was written, for `Task 'x' not found.` */
export const requiresPath = (taskPath: Path, data: unknown, index: number): Path =>
  isMap(data) && Array.isArray(data.requires) ? [...taskPath, 'requires', index] : [...taskPath, 'requires'];

export const parseTaskDefaults = (
  ctx: ValidationContext,
  path: Path,
  value: unknown,
  sources: TransitionSources,
): TaskDefaultsSpec | undefined => {
  if (!ctx.map(path, value)) return undefined;
  ctx.knownKeys(path, value, TASK_DEFAULTS_KEYS);
  const policies = parsePolicies(ctx, path, value);
  let safeRerun: boolean | string | undefined;
  if ('safe-rerun' in value && ctx.expressionOrBoolean([...path, 'safe-rerun'], value['safe-rerun'])) {
    safeRerun = value['safe-rerun'] as boolean | string;
  }
  return {
    policies,
    ...(safeRerun !== undefined ? { safeRerun } : {}),
    clauses: parseClauses(ctx, path, value, sources),
    requires: parseRequires(ctx, path, value),
  };
};

const effectiveTransitions = (
  name: string,
  own: Partial<Record<TransitionEvent, TransitionClause>>,
  defaults: TaskDefaultsSpec | undefined,
): Record<TransitionEvent, Transition[]> => {
  const pick = (event: TransitionEvent): Transition[] => {
    const mine = own[event]?.next ?? [];
    if (mine.length > 0) return [...mine];
    return (defaults?.clauses[event]?.next ?? []).filter((t) => t.target !== name);
  };
  return {
    'on-success': pick('on-success'),
    'on-error': pick('on-error'),
    'on-complete': pick('on-complete'),
    'on-skip': pick('on-skip'),
  };
};

const optionalMap = (ctx: ValidationContext, path: Path, data: JsonMap, key: string): JsonMap | undefined => {
  if (!(key in data)) return undefined;
  const v = data[key];
  if (!ctx.wordKeyedMap([...path, key], v)) return undefined;
  ctx.expressions([...path, key], v);
  return v;
};

/** One task of a workflow (DSL-3, DSL-4, DSL-5). Returns undefined when it is too broken to model. */
export const parseTask = (
  ctx: ValidationContext,
  path: Path,
  name: string,
  value: unknown,
  type: WorkflowType,
  defaults: TaskDefaultsSpec | undefined,
  sources: TransitionSources,
): TaskSpec | undefined => {
  if (ctx.isNonStringKey(path)) {
    ctx.schema(
      path,
      `task name '${name}' is read as a ${name === '' ? 'null' : 'boolean'} by YAML; quote it`,
      'key',
    );
  } else if (!WORD_NAME.test(name)) {
    ctx.schema(path, `'${name}' does not match '^\\w+$'`, 'key');
  }
  if (name.length > MAX_TASK_NAME_LENGTH) {
    ctx.schema(
      path,
      `The length of a '${name}' task name must not exceed ${MAX_TASK_NAME_LENGTH} symbols`,
      'key',
    );
  }
  if (!ctx.map(path, value)) return undefined;
  const data = value;
  ctx.knownKeys(path, data, TASK_KEYS[type], misuseHint(type));

  let description: string | undefined;
  if ('description' in data && ctx.nonEmptyString([...path, 'description'], data.description))
    description = data.description;
  let tags: string[] = [];
  if ('tags' in data && ctx.uniqueStringList([...path, 'tags'], data.tags)) tags = data.tags;

  let action: string | undefined;
  let workflow: string | undefined;
  let inlineInput: Record<string, unknown> = {};
  if ('action' in data && 'workflow' in data) {
    ctx.schema(path, "'action' and 'workflow' are mutually exclusive");
  }
  for (const key of ['action', 'workflow'] as const) {
    if (!(key in data) || !ctx.nonEmptyString([...path, key], data[key])) continue;
    const parsed = parseCommand(data[key]);
    if (!parsed.ok) {
      ctx.schema([...path, key], parsed.error);
      continue;
    }
    ctx.expressions([...path, key], parsed.params);
    if (/^<%|^\{\{/.test(parsed.name)) ctx.expressions([...path, key], parsed.name);
    if (key === 'action') action = parsed.name;
    else workflow = parsed.name;
    inlineInput = parsed.params;
  }
  if (action === undefined && workflow === undefined && !('action' in data) && !('workflow' in data)) {
    action = DEFAULT_ACTION;
  }

  let input: Record<string, unknown> | string = { ...inlineInput };
  if ('input' in data) {
    const raw = data.input;
    if (typeof raw === 'string') {
      if (ctx.nonEmptyString([...path, 'input'], raw)) {
        ctx.expressions([...path, 'input'], raw);
        if (Object.keys(inlineInput).length > 0) {
          ctx.schema([...path, 'input'], 'an expression input cannot be combined with inline parameters');
        }
        input = raw;
      }
    } else if (isMap(raw)) {
      if (ctx.wordKeyedMap([...path, 'input'], raw)) {
        ctx.expressions([...path, 'input'], raw);
        input = { ...raw, ...inlineInput };
      }
    } else {
      ctx.schema([...path, 'input'], `${shortRepr(raw)} is not valid under any of the given schemas`);
    }
  }

  const publish = optionalMap(ctx, path, data, 'publish');
  const publishOnError = optionalMap(ctx, path, data, 'publish-on-error');
  const publishOnSkip = optionalMap(ctx, path, data, 'publish-on-skip');
  const withItems =
    'with-items' in data ? parseWithItems(ctx, [...path, 'with-items'], data['with-items']) : [];
  const ownPolicies: TaskPolicies = parsePolicies(ctx, path, data);

  let keepResult: boolean | string = true;
  if ('keep-result' in data && ctx.expressionOrBoolean([...path, 'keep-result'], data['keep-result'])) {
    keepResult = data['keep-result'] as boolean | string;
  }
  let safeRerun: boolean | string = defaults?.safeRerun ?? false;
  if ('safe-rerun' in data && ctx.expressionOrBoolean([...path, 'safe-rerun'], data['safe-rerun'])) {
    safeRerun = data['safe-rerun'] as boolean | string;
  }
  let target: string | undefined;
  if ('target' in data && ctx.nonEmptyString([...path, 'target'], data.target)) {
    ctx.expressions([...path, 'target'], data.target);
    target = data.target;
  }

  let join: 'all' | number | undefined;
  if (type === 'direct' && 'join' in data) {
    const j = data.join;
    if (j === 'all') join = 'all';
    else if (j === 'one') join = 1;
    else if (typeof j === 'number' && Number.isInteger(j) && j >= 0) join = j === 0 ? undefined : j;
    else
      ctx.schema(
        [...path, 'join'],
        `${shortRepr(j)} is not valid under any of the given schemas (expected 'all', 'one' or a non-negative integer)`,
      );
    if (join !== undefined && name.length > MAX_JOIN_TASK_NAME_LENGTH) {
      ctx.schema(
        path,
        `The length of a '${name}' join task name must not exceed ${MAX_JOIN_TASK_NAME_LENGTH} symbols`,
        'key',
      );
    }
  }

  const clauses = type === 'direct' ? parseClauses(ctx, path, data, sources) : {};
  const ownRequires = type === 'reverse' ? parseRequires(ctx, path, data) : [];
  const requires =
    type === 'reverse'
      ? [...new Set([...ownRequires, ...(defaults?.requires ?? [])])].filter((r) => r !== name)
      : [];

  return {
    name,
    ...(description !== undefined ? { description } : {}),
    tags,
    type: workflow !== undefined ? 'WORKFLOW' : 'ACTION',
    ...(action !== undefined ? { action } : {}),
    ...(workflow !== undefined ? { workflow } : {}),
    input,
    inlineInput,
    ...(publish ? { publish } : {}),
    ...(publishOnError ? { publishOnError } : {}),
    ...(publishOnSkip ? { publishOnSkip } : {}),
    withItems,
    policies: mergePolicies(ownPolicies, defaults?.policies),
    keepResult,
    safeRerun,
    ...(target !== undefined ? { target } : {}),
    ...(join !== undefined ? { join } : {}),
    clauses,
    transitions:
      type === 'direct'
        ? effectiveTransitions(name, clauses, defaults)
        : { 'on-success': [], 'on-error': [], 'on-complete': [], 'on-skip': [] },
    requires,
  };
};
