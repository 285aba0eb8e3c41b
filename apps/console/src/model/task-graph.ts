/**
 * The task graph of a Mistral workflow definition, from its parsed YAML. Pure: no DOM, no React.
 *
 * Direct workflows draw one edge per transition (`on-success`, `on-error`, `on-complete`, in the
 * list, dict and `next:` forms of DSL v2); engine commands (`fail`, `succeed`, `pause`, `noop`)
 * are not tasks and draw no edge. Reverse workflows draw one edge per `requires` entry, from the
 * required task to the task that needs it (the order they run in).
 */

export const EDGE_KINDS = ['on-success', 'on-error', 'on-complete', 'requires'] as const;
export type EdgeKind = (typeof EDGE_KINDS)[number];

export interface TaskNodeSpec {
  readonly name: string;
  /** `action` or `workflow` named by the task (null: neither, e.g. a join-only task). */
  readonly action: string | null;
  readonly workflow: string | null;
  readonly withItems: boolean;
  readonly retry: boolean;
  readonly join: boolean;
}

export interface TaskEdgeSpec {
  readonly from: string;
  readonly to: string;
  readonly kind: EdgeKind;
  /** The YAQL/Jinja condition of a dict-form transition, as written. */
  readonly condition: string | null;
}

export interface TaskGraph {
  readonly workflowName: string;
  readonly type: 'direct' | 'reverse';
  readonly tasks: readonly TaskNodeSpec[];
  readonly edges: readonly TaskEdgeSpec[];
}

const ENGINE_COMMANDS = new Set(['fail', 'succeed', 'pause', 'noop']);

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `task_name key=value` → `task_name` (the first word names the target). */
const targetName = (s: string): string => s.trim().split(/\s+/, 1)[0] ?? '';

const conditionText = (v: unknown): string | null =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);

/** Targets of one transition clause: a name, a list of names or `{name: condition}` dicts, or `{next: …}`. */
function targets(clause: unknown): { to: string; condition: string | null }[] {
  if (clause === null || clause === undefined) return [];
  if (typeof clause === 'string') return [{ to: targetName(clause), condition: null }];
  if (Array.isArray(clause)) return clause.flatMap((item) => targets(item));
  if (isRecord(clause)) {
    if ('next' in clause || 'publish' in clause || 'publish-on-error' in clause)
      return targets(clause['next']);
    return Object.entries(clause).map(([name, cond]) => ({
      to: targetName(name),
      condition: conditionText(cond),
    }));
  }
  return [];
}

/**
 * The workflow a definition text's parsed YAML describes. A workflow's stored definition holds
 * `version` and one workflow; `name` picks one when there are several (a workbook's `workflows:`
 * section is read too). Throws when no workflow with tasks is found.
 */
export function taskGraphOf(doc: unknown, name?: string): TaskGraph {
  if (!isRecord(doc)) throw new Error('The definition is not a YAML mapping.');
  const candidates: [string, Record<string, unknown>][] = [];
  const collect = (section: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(section)) {
      if (key !== 'version' && isRecord(value) && isRecord(value['tasks'])) candidates.push([key, value]);
    }
  };
  collect(doc);
  if (isRecord(doc['workflows'])) collect(doc['workflows']);
  const short = name?.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : name;
  const found =
    candidates.find(([key]) => key === name || key === short) ??
    (candidates.length === 1 ? candidates[0] : undefined);
  if (!found)
    throw new Error(
      name
        ? `The definition has no workflow ${name} with tasks.`
        : 'The definition has no workflow with tasks.',
    );
  const [workflowName, wf] = found;
  const type = wf['type'] === 'reverse' ? 'reverse' : 'direct';
  const taskDefaults = isRecord(wf['task-defaults']) ? wf['task-defaults'] : {};
  const rawTasks = wf['tasks'] as Record<string, unknown>;
  const tasks: TaskNodeSpec[] = [];
  const edges: TaskEdgeSpec[] = [];
  for (const [taskName, rawTask] of Object.entries(rawTasks)) {
    const t = isRecord(rawTask) ? rawTask : {};
    const action = typeof t['action'] === 'string' ? targetName(t['action']) : null;
    const workflow = typeof t['workflow'] === 'string' ? targetName(t['workflow']) : null;
    tasks.push({
      name: taskName,
      action,
      workflow,
      withItems: t['with-items'] !== undefined,
      retry: t['retry'] !== undefined || taskDefaults['retry'] !== undefined,
      join: t['join'] !== undefined,
    });
    if (type === 'reverse') {
      const requires = t['requires'];
      const names =
        typeof requires === 'string'
          ? [requires]
          : Array.isArray(requires)
            ? requires.filter((r): r is string => typeof r === 'string')
            : [];
      for (const r of names) edges.push({ from: r, to: taskName, kind: 'requires', condition: null });
      continue;
    }
    for (const kind of ['on-success', 'on-error', 'on-complete'] as const) {
      for (const { to, condition } of targets(t[kind])) {
        if (!ENGINE_COMMANDS.has(to) && to in rawTasks) edges.push({ from: taskName, to, kind, condition });
      }
    }
  }
  return { workflowName, type, tasks, edges };
}
