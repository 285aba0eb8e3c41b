import { parseInputList } from './input-list';
import {
  DSL_VERSION,
  type InputParameter,
  type TaskDefaultsSpec,
  type TaskSpec,
  TRANSITION_EVENTS,
  type Transition,
  WORKFLOW_TYPES,
  type WorkflowSpec,
  type WorkflowType,
} from './model';
import { parseTask, parseTaskDefaults, requiresPath } from './task-parser';
import { type TransitionSources } from './transitions';
import { type JsonMap, type Path, type ValidationContext, isMap, shortRepr } from './validation-context';

const WORKFLOW_KEYS = new Set([
  'type',
  'description',
  'tags',
  'input',
  'output',
  'output-on-error',
  'vars',
  'task-defaults',
  'tasks',
  // Mistral injects these two into every item and so tolerates them being written.
  'name',
  'version',
]);

/** oslo `is_uuid_like`: 32 hex digits once braces, `urn:`, `uuid:` and hyphens are removed. */
export const isUuidLike = (name: string): boolean =>
  /^[0-9a-f]{32}$/.test(
    name
      .toLowerCase()
      .replace(/^urn:/, '')
      .replace(/^uuid:/, '')
      .replace(/[{}]/g, '')
      .replace(/-/g, ''),
  );

/** Checks shared by every item name of a list or workbook (DSL-1.4). */
export const checkItemName = (
  ctx: ValidationContext,
  path: Path,
  name: string,
  what: 'Workflow' | 'Action',
): void => {
  if (ctx.isNonStringKey(path)) {
    ctx.schema(
      path,
      `${what.toLowerCase()} name '${name}' is read as a ${name === '' ? 'null' : 'boolean'} by YAML; quote it`,
      'key',
    );
  }
  if (/\s/.test(name)) ctx.semantic(path, `${what} name must not contain spaces [name=${name}]`, 'key');
};

const outboundTargets = (task: TaskSpec): Transition[] =>
  TRANSITION_EVENTS.flatMap((e) => task.transitions[e]);

const checkDirect = (
  ctx: ValidationContext,
  path: Path,
  name: string,
  tasks: readonly TaskSpec[],
  sources: TransitionSources,
  defaultsPath: Path,
): { startTasks: string[]; inbound: Record<string, string[]> } => {
  const names = new Set(tasks.map((t) => t.name));
  const inbound: Record<string, string[]> = {};
  for (const t of tasks) inbound[t.name] = [];
  for (const t of tasks) {
    const targets = new Set(
      outboundTargets(t)
        .filter((x) => x.kind === 'task')
        .map((x) => x.target),
    );
    for (const target of targets) inbound[target]?.push(t.name);
  }
  const startTasks = tasks.filter((t) => (inbound[t.name] ?? []).length === 0).map((t) => t.name);
  if (startTasks.length === 0) {
    ctx.semantic(
      [...path, 'tasks'],
      `Failed to find start tasks in direct workflow. There must be at least one task without inbound transition.[workflow_name=${name}]`,
    );
  }
  const reported = new Set<string>();
  for (const t of tasks) {
    for (const tr of outboundTargets(t)) {
      if (tr.kind === 'command' || names.has(tr.target)) continue;
      const at = sources.get(tr) ?? defaultsPath;
      const key = `${tr.target}@${JSON.stringify(at)}`;
      if (reported.has(key)) continue;
      reported.add(key);
      ctx.semantic(at, `Task '${tr.target}' not found.`);
    }
  }
  for (const t of tasks) {
    if (t.join === undefined) continue;
    const count = (inbound[t.name] ?? []).length;
    const at = [...path, 'tasks', t.name, 'join'];
    if (t.join === 'all') {
      if (count === 0) ctx.semantic(at, `No inbound tasks for task with 'join: all' [task_name=${t.name}]`);
    } else if (count < t.join) {
      ctx.semantic(
        at,
        `Not enough inbound tasks for task with 'join' [task_name=${t.name}, join=${t.join}, inbound_tasks=${count}]`,
      );
    }
  }
  return { startTasks, inbound };
};

const checkReverse = (
  ctx: ValidationContext,
  path: Path,
  tasks: readonly TaskSpec[],
  rawTasks: JsonMap,
  defaults: TaskDefaultsSpec | undefined,
  rawDefaults: unknown,
): string[] => {
  const names = new Set(tasks.map((t) => t.name));
  for (const t of tasks) {
    const raw = rawTasks[t.name];
    const own = isMap(raw)
      ? typeof raw.requires === 'string'
        ? [raw.requires]
        : Array.isArray(raw.requires)
          ? raw.requires
          : []
      : [];
    own.forEach((req, i) => {
      if (typeof req === 'string' && !names.has(req)) {
        ctx.semantic(requiresPath([...path, 'tasks', t.name], raw, i), `Task '${req}' not found.`);
      }
    });
  }
  (defaults?.requires ?? []).forEach((req, i) => {
    if (!names.has(req))
      ctx.semantic(requiresPath([...path, 'task-defaults'], rawDefaults, i), `Task '${req}' not found.`);
  });
  const cycle = findRequiresCycle(tasks, names);
  if (cycle) {
    const first = cycle[0] as string;
    ctx.semantic(
      [...path, 'tasks', first, 'requires'],
      `Tasks require each other in a cycle: ${cycle.join(' -> ')}`,
    );
  }
  return tasks.filter((t) => t.requires.length === 0).map((t) => t.name);
};

/**
 * The first cycle of `requires` edges (a reverse workflow could never run any of its tasks), as
 * task names from a task back to itself, in definition order; undefined when there is none.
 */
const findRequiresCycle = (tasks: readonly TaskSpec[], names: ReadonlySet<string>): string[] | undefined => {
  const requires = new Map(tasks.map((t) => [t.name, t.requires.filter((r) => names.has(r))]));
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (name: string): string[] | undefined => {
    const at = onPath.indexOf(name);
    if (at >= 0) return [...onPath.slice(at), name];
    if (done.has(name)) return undefined;
    onPath.push(name);
    for (const req of requires.get(name) ?? []) {
      const found = visit(req);
      if (found) return found;
    }
    onPath.pop();
    done.add(name);
    return undefined;
  };
  for (const t of tasks) {
    const found = visit(t.name);
    if (found) return found;
  }
  return undefined;
};

/**
 * One workflow of a workflow list or workbook (DSL-2). `path` is its logical path (`workflows.<name>`),
 * `fullName` the stored name. Returns undefined when schema errors were found (they are in `ctx`).
 */
export const parseWorkflow = (
  ctx: ValidationContext,
  path: Path,
  name: string,
  fullName: string,
  value: unknown,
): WorkflowSpec | undefined => {
  const before = ctx.count();
  checkItemName(ctx, path, name, 'Workflow');
  if (isUuidLike(name)) ctx.semantic(path, 'Workflow name cannot be in the format of UUID.', 'key');
  if (!ctx.map(path, value)) return undefined;
  const data = value;
  ctx.knownKeys(path, data, WORKFLOW_KEYS);

  let type: WorkflowType = 'direct';
  if ('type' in data) {
    if ((WORKFLOW_TYPES as readonly unknown[]).includes(data.type)) type = data.type as WorkflowType;
    else ctx.schema([...path, 'type'], `${shortRepr(data.type)} is not one of ['reverse', 'direct']`);
  }
  let description: string | undefined;
  if ('description' in data && ctx.nonEmptyString([...path, 'description'], data.description))
    description = data.description;
  let tags: string[] = [];
  if ('tags' in data && ctx.uniqueStringList([...path, 'tags'], data.tags)) tags = data.tags;
  const input: InputParameter[] = 'input' in data ? parseInputList(ctx, [...path, 'input'], data.input) : [];

  const maps: Partial<Record<'output' | 'output-on-error' | 'vars', JsonMap>> = {};
  for (const key of ['output', 'output-on-error', 'vars'] as const) {
    if (!(key in data)) continue;
    if (ctx.wordKeyedMap([...path, key], data[key])) {
      ctx.expressions([...path, key], data[key]);
      maps[key] = data[key];
    }
  }

  const sources: TransitionSources = new Map();
  const taskDefaults =
    'task-defaults' in data
      ? parseTaskDefaults(ctx, [...path, 'task-defaults'], data['task-defaults'], sources)
      : undefined;

  const tasks: TaskSpec[] = [];
  let rawTasks: JsonMap = {};
  if (!('tasks' in data)) {
    ctx.schema(path, "'tasks' is a required property");
  } else if (!isMap(data.tasks) || Object.keys(data.tasks).length === 0) {
    if (isMap(data.tasks) || data.tasks === null)
      ctx.schema([...path, 'tasks'], "Workflow doesn't have any tasks");
    else ctx.typeError([...path, 'tasks'], data.tasks, 'object');
  } else {
    rawTasks = data.tasks;
    for (const [taskName, taskData] of Object.entries(rawTasks)) {
      const task = parseTask(
        ctx,
        [...path, 'tasks', taskName],
        taskName,
        taskData,
        type,
        taskDefaults,
        sources,
      );
      if (task) tasks.push(task);
    }
  }
  if (ctx.count() !== before) return undefined;

  let startTasks: string[];
  let inboundTasks: Record<string, string[]> = {};
  if (type === 'direct') {
    const checked = checkDirect(ctx, path, name, tasks, sources, [...path, 'task-defaults']);
    startTasks = checked.startTasks;
    inboundTasks = checked.inbound;
  } else {
    startTasks = checkReverse(ctx, path, tasks, rawTasks, taskDefaults, data['task-defaults']);
  }

  return {
    version: DSL_VERSION,
    name: fullName,
    type,
    ...(description !== undefined ? { description } : {}),
    tags,
    input,
    ...(maps.output ? { output: maps.output } : {}),
    ...(maps['output-on-error'] ? { outputOnError: maps['output-on-error'] } : {}),
    vars: maps.vars ?? {},
    ...(taskDefaults ? { taskDefaults } : {}),
    tasks,
    startTasks,
    inboundTasks,
  };
};
