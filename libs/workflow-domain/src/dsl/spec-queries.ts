import { pyRepr } from './python-text';
import { checkActionInput } from './standard-actions';
import {
  type PublishMap,
  type PublishScopes,
  type TaskSpec,
  type TransitionEvent,
  type WorkflowSpec,
} from './model';

/** The task states that publish (DSL-14.6). */
export type CompletedTaskState = 'SUCCESS' | 'ERROR' | 'SKIPPED';

const PLAIN: Readonly<Record<CompletedTaskState, 'publish' | 'publishOnError' | 'publishOnSkip'>> = {
  SUCCESS: 'publish',
  ERROR: 'publishOnError',
  SKIPPED: 'publishOnSkip',
};
const CLAUSE: Readonly<Record<CompletedTaskState, TransitionEvent>> = {
  SUCCESS: 'on-success',
  ERROR: 'on-error',
  SKIPPED: 'on-skip',
};

const merge = (...maps: (PublishMap | undefined)[]): PublishMap | undefined => {
  const present = maps.filter((m): m is PublishMap => m !== undefined);
  return present.length ? Object.assign({}, ...present) : undefined;
};

/**
 * What a task publishes on reaching `state` (DSL-14.6): the plain key (`publish`, `publish-on-error`,
 * `publish-on-skip`, as branch variables), the advanced `publish` of `on-complete` and of the clause
 * matching the state, merged per scope with precedence on-complete › plain key › state clause — what
 * the real Mistral 15 does (the spec's text says the reverse; the server wins). Keys keep Mistral's
 * order: the state clause's first, then the plain key's, then on-complete's.
 * Undefined when nothing is published.
 */
export const resolvePublish = (task: TaskSpec, state: CompletedTaskState): PublishScopes | undefined => {
  const plain = task[PLAIN[state]];
  const complete = task.clauses['on-complete']?.publish;
  const specific = task.clauses[CLAUSE[state]]?.publish;
  const branch = merge(specific?.branch, plain, complete?.branch);
  const global = merge(specific?.global, complete?.global);
  const atomic = merge(specific?.atomic, complete?.atomic);
  if (!branch && !global && !atomic) return undefined;
  return { ...(branch ? { branch } : {}), ...(global ? { global } : {}), ...(atomic ? { atomic } : {}) };
};

/** The task of that name, if the workflow has one. */
export const taskByName = (wf: WorkflowSpec, name: string): TaskSpec | undefined =>
  wf.tasks.find((t) => t.name === name);

/**
 * The Mistral message for inputs that do not fit declared parameters (DSL-2.3, DSL-3.5):
 * `Invalid input [name=wf, class=DirectWorkflowSpec, missing=['b'], unexpected=['x']]`, each list only when
 * non-empty. `cls` is `DirectWorkflowSpec`/`ReverseWorkflowSpec` for workflows, the implementation name
 * for actions.
 */
export const invalidInputMessage = (
  name: string,
  cls: string,
  missing: readonly string[],
  unexpected: readonly string[],
): string => {
  const parts = [`name=${name}`, `class=${cls}`];
  if (missing.length) parts.push(`missing=${pyRepr(missing)}`);
  if (unexpected.length) parts.push(`unexpected=${pyRepr(unexpected)}`);
  return `Invalid input [${parts.join(', ')}]`;
};

/** The spec class name Mistral shows for a workflow type. */
export const workflowSpecClass = (wf: Pick<WorkflowSpec, 'type'>): string =>
  wf.type === 'reverse' ? 'ReverseWorkflowSpec' : 'DirectWorkflowSpec';

/**
 * Checks an execution's input against the workflow's declared input (DSL-2.3) and fills defaults.
 * Returns the complete input (declared order first, defaults included) or the `Invalid input [...]` message.
 */
export const resolveWorkflowInput = (
  wf: Pick<WorkflowSpec, 'name' | 'type' | 'input'>,
  given: Readonly<Record<string, unknown>>,
): { ok: true; input: Record<string, unknown> } | { ok: false; error: string } => {
  const { missing, unexpected } = checkActionInput(wf.input, given);
  if (missing.length || unexpected.length) {
    return { ok: false, error: invalidInputMessage(wf.name, workflowSpecClass(wf), missing, unexpected) };
  }
  const input: Record<string, unknown> = {};
  for (const p of wf.input) input[p.name] = p.name in given ? given[p.name] : (p.default ?? null);
  return { ok: true, input };
};

/**
 * Reverse workflows (DSL-5.1, DSL-5.2): the target task and its transitive prerequisites, in the
 * workflow's written order; undefined when the workflow has no task of that name (the caller answers
 * `Invalid task name [wf_spec=..., task_name=<x>]`).
 */
export const reverseTaskClosure = (wf: WorkflowSpec, target: string): string[] | undefined => {
  if (!taskByName(wf, target)) return undefined;
  const needed = new Set<string>();
  const visit = (name: string): void => {
    if (needed.has(name)) return;
    needed.add(name);
    for (const req of taskByName(wf, name)?.requires ?? []) visit(req);
  };
  visit(target);
  return wf.tasks.map((t) => t.name).filter((n) => needed.has(n));
};
