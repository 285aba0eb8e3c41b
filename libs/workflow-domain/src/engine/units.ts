import { pyStr } from '../dsl/python-text';
import { DEFAULT_ACTION, type TaskSpec } from '../dsl/model';
import { isStandardAction } from '../dsl/standard-actions';
import type { ActionExecution, JsonMap, SubUnit, TaskExecution } from './model';
import { isCompleted } from './states';
import { FatalTaskError, type WorkingState, errorMessage } from './working-state';

/**
 * A task's units: the action executions or sub-workflows that do its work (one, or one per item of
 * a with-items task), started with the task's evaluated input and no longer accepted when a new
 * attempt begins.
 */

/** The task's sub-executions, as copies (changed ones are written back as a new list). */
export const subUnits = (t: TaskExecution): SubUnit[] =>
  (t.runtimeContext.sub_executions ?? []).map((u) => ({ ...u }));

/**
 * Marks the task's accepted units (action executions, sub-executions) not accepted; with
 * `keepSucceeded`, those in SUCCESS stay. Action rows the snapshot does not hold are reached by a
 * set-based change.
 */
export function unacceptUnits(
  ws: WorkingState,
  task: TaskExecution,
  keepSucceeded: boolean,
  onlyUnfinished = false,
): void {
  const matches = (state: string) =>
    onlyUnfinished ? !isCompleted(state) : !(keepSucceeded && state === 'SUCCESS');
  for (const a of ws.actions) {
    if (a.taskExecutionId === task.id && a.accepted && matches(a.state)) {
      a.accepted = false;
      ws.touchAction(a);
    }
  }
  if (task.type === 'ACTION') {
    ws.unaccepted.push({
      taskExecutionId: task.id,
      ...(onlyUnfinished
        ? { states: ['IDLE', 'RUNNING', 'PAUSED'] }
        : keepSucceeded
          ? { states: ['IDLE', 'RUNNING', 'PAUSED', 'ERROR', 'CANCELLED'] }
          : {}),
    });
    return;
  }
  const units = subUnits(task);
  if (units.some((u) => u.accepted && matches(u.state))) {
    task.runtimeContext.sub_executions = units.map((u) =>
      u.accepted && matches(u.state) ? { ...u, accepted: false } : u,
    );
    ws.touch(task);
  }
}

/** Starts one action execution or sub-workflow for the task (one item of with-items, or the only one). */
export function startUnit(
  ws: WorkingState,
  task: TaskExecution,
  spec: TaskSpec,
  itemVars: JsonMap,
  index: number | null,
  timeoutSeconds: number | undefined,
): void {
  const data = index === null ? ws.taskData(task) : ws.itemData(task, itemVars);
  let input: unknown;
  try {
    input = ws.eval(spec.input, data, task);
  } catch (e) {
    throw new FatalTaskError(task, ws.runFailure(task, errorMessage(e)));
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new FatalTaskError(
      task,
      ws.runFailure(
        task,
        `Wrong dynamic input for task: ${task.name}. Dict type is expected. Actual type: ${pyTypeName(input)}. Actual value: ${pyStr(input)}`,
      ),
    );
  }
  const evaluatedInput = input as JsonMap;
  if (spec.type === 'WORKFLOW') {
    let name: unknown;
    try {
      name = ws.eval(spec.workflow, data, task);
    } catch (e) {
      throw new FatalTaskError(task, ws.runFailure(task, errorMessage(e)));
    }
    const subId = ws.newId();
    const units = subUnits(task);
    units.push({ id: subId, index, state: 'RUNNING', result: null, stateInfo: null, accepted: true });
    task.runtimeContext.sub_executions = units;
    ws.touch(task);
    const ex = ws.ex;
    const params: JsonMap = {
      namespace: ex.params['namespace'] ?? ex.workflowNamespace,
      env: ws.env,
      evaluate_env: false,
      root_execution_id: ex.rootExecutionId ?? ex.id,
      task_execution_id: task.id,
      ...(index !== null ? { index } : {}),
      ...(ex.params['notify'] !== undefined ? { notify: ex.params['notify'] } : {}),
    };
    ws.effects.push({
      type: 'start-sub-workflow',
      subExecutionId: subId,
      taskExecutionId: task.id,
      taskName: task.name,
      workflowName: String(name),
      input: evaluatedInput,
      params,
      rootExecutionId: ex.rootExecutionId ?? ex.id,
      itemIndex: index,
    });
    return;
  }
  let actionName: unknown = spec.action ?? DEFAULT_ACTION;
  try {
    actionName = ws.eval(actionName, data, task);
  } catch (e) {
    throw new FatalTaskError(task, ws.runFailure(task, errorMessage(e)));
  }
  const name =
    actionName === null || actionName === undefined || actionName === ''
      ? DEFAULT_ACTION
      : String(actionName);
  const defaults = (ws.env['__actions'] as JsonMap | undefined)?.[name];
  const finalInput =
    defaults && typeof defaults === 'object' && !Array.isArray(defaults)
      ? { ...(defaults as JsonMap), ...evaluatedInput }
      : evaluatedInput;
  const action: ActionExecution = {
    id: ws.newId(),
    taskExecutionId: task.id,
    executionId: ws.ex.id,
    name,
    state: 'RUNNING',
    stateInfo: null,
    input: finalInput,
    output: null,
    accepted: true,
    itemIndex: index,
    createdAt: ws.now,
    updatedAt: null,
  };
  ws.actions.push(action);
  ws.actionsById.set(action.id, action);
  ws.createdActions.add(action.id);
  ws.effects.push({
    type: 'run-action',
    actionExecutionId: action.id,
    taskExecutionId: task.id,
    taskName: task.name,
    actionName: name,
    input: finalInput,
    itemIndex: index,
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    safeRerun: spec.safeRerun === true,
    // Only an ad-hoc action reads the task's data (its base-input, DSL-7.2); a standard one never
    // does. Sent with every item of a with-items task, that data (which holds the list when it
    // comes from the input or a published variable) made N items cost O(N²) bytes.
    ...(isStandardAction(name) ? {} : { taskData: stripInternal(ws.taskData(task, itemVars)) }),
  });
}

const stripInternal = (data: JsonMap): JsonMap => {
  const out: JsonMap = {};
  for (const [k, v] of Object.entries(data)) if (!k.startsWith('__')) out[k] = v;
  return out;
};

const pyTypeName = (v: unknown): string =>
  v === null || v === undefined
    ? "<class 'NoneType'>"
    : Array.isArray(v)
      ? "<class 'list'>"
      : typeof v === 'string'
        ? "<class 'str'>"
        : typeof v === 'boolean'
          ? "<class 'bool'>"
          : typeof v === 'number'
            ? Number.isInteger(v)
              ? "<class 'int'>"
              : "<class 'float'>"
            : "<class 'dict'>";
