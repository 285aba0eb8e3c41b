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
 * matching the state, merged per scope with precedence state clause › on-complete › plain key.
 * Undefined when nothing is published.
 */
export const resolvePublish = (task: TaskSpec, state: CompletedTaskState): PublishScopes | undefined => {
  const plain = task[PLAIN[state]];
  const complete = task.clauses['on-complete']?.publish;
  const specific = task.clauses[CLAUSE[state]]?.publish;
  const branch = merge(plain, complete?.branch, specific?.branch);
  const global = merge(complete?.global, specific?.global);
  const atomic = merge(complete?.atomic, specific?.atomic);
  if (!branch && !global && !atomic) return undefined;
  return { ...(branch ? { branch } : {}), ...(global ? { global } : {}), ...(atomic ? { atomic } : {}) };
};

/** The task of that name, if the workflow has one. */
export const taskByName = (wf: WorkflowSpec, name: string): TaskSpec | undefined =>
  wf.tasks.find((t) => t.name === name);
