import { InvalidInputError } from '@osc/errors';
import type { WorkflowSpec } from '../dsl/model';
import { pyRepr } from '../dsl/python-text';
import { evaluateWith } from './expression-context';
import type { JsonMap, WorkflowExecution } from './model';

export interface NewExecutionArgs {
  id: string;
  spec: WorkflowSpec;
  workflowId: string;
  workflowNamespace: string;
  projectId: string;
  description?: string;
  input?: JsonMap;
  params?: JsonMap;
  taskExecutionId?: string | null;
  rootExecutionId?: string | null;
}

const specClass = (spec: WorkflowSpec): string =>
  spec.type === 'reverse' ? 'ReverseWorkflowSpec' : 'DirectWorkflowSpec';

/**
 * DSL-2.3: missing required or undeclared inputs fail with
 * `Invalid input [name=<wf>, class=<...>, missing=[...], unexpected=[...]]`; defaults fill the rest.
 */
export function checkWorkflowInput(spec: WorkflowSpec, input: JsonMap): JsonMap {
  const declared = new Set(spec.input.map((p) => p.name));
  const missing = spec.input.filter((p) => p.required && !(p.name in input)).map((p) => p.name);
  const unexpected = Object.keys(input).filter((k) => !declared.has(k));
  if (missing.length || unexpected.length) {
    const parts = [`name=${spec.name}`, `class=${specClass(spec)}`];
    if (missing.length) parts.push(`missing=${pyRepr(missing)}`);
    if (unexpected.length) parts.push(`unexpected=${pyRepr(unexpected)}`);
    throw new InvalidInputError(`Invalid input [${parts.join(', ')}]`);
  }
  const out: JsonMap = {};
  for (const p of spec.input) out[p.name] = p.name in input ? input[p.name] : (p.default ?? null);
  return out;
}

/** Splits a workflow task's evaluated input into the sub-workflow's input and params (DSL-3.7). */
export function splitSubWorkflowInput(
  spec: WorkflowSpec,
  given: JsonMap,
): { input: JsonMap; params: JsonMap } {
  const declared = new Set(spec.input.map((p) => p.name));
  const input: JsonMap = {};
  const params: JsonMap = {};
  for (const [k, v] of Object.entries(given)) (declared.has(k) ? input : params)[k] = v;
  return { input, params };
}

/**
 * A new execution row in state RUNNING, ready for an `engine.start-execution` command (DSL-13.1):
 * input checked and defaulted, `env` evaluated unless `evaluate_env` is false, `namespace` recorded,
 * reverse workflows checked for `task_name`. Throws `InvalidInputError` with Mistral's messages.
 */
export function newExecution(args: NewExecutionArgs, now: Date): WorkflowExecution {
  const spec = args.spec;
  const input = checkWorkflowInput(spec, args.input ?? {});
  const params: JsonMap = { ...(args.params ?? {}) };
  let env = params['env'];
  if (env === undefined || env === null) env = {};
  if (typeof env !== 'object' || Array.isArray(env))
    throw new InvalidInputError(`Environment is not found: ${String(env)}`);
  const rawEnv = env as JsonMap;
  if (params['evaluate_env'] !== false && Object.keys(rawEnv).length > 0) {
    env = evaluateWith(rawEnv, { __env: rawEnv, ...rawEnv }, { env: () => rawEnv });
  }
  params['env'] = env;
  if (params['namespace'] === undefined) params['namespace'] = args.workflowNamespace;
  if (spec.type === 'reverse') {
    const target = params['task_name'];
    if (typeof target !== 'string' || !spec.tasks.some((t) => t.name === target)) {
      throw new InvalidInputError(
        `Invalid task name [wf_spec=${specClass(spec)}, task_name=${String(target ?? 'None')}]`,
      );
    }
  }
  return {
    id: args.id,
    workflowId: args.workflowId,
    workflowName: spec.name,
    workflowNamespace: args.workflowNamespace,
    spec,
    description: args.description ?? '',
    tags: [...spec.tags],
    projectId: args.projectId,
    state: 'RUNNING',
    stateInfo: null,
    input,
    output: {},
    params,
    context: {},
    varNames: [],
    taskExecutionId: args.taskExecutionId ?? null,
    rootExecutionId: args.rootExecutionId ?? null,
    deferred: [],
    createdAt: now,
    updatedAt: null,
  };
}

/** DSL-14.7: an execution's `published_global` (global context minus internal keys and vars). */
export const executionPublishedGlobal = (ex: Pick<WorkflowExecution, 'context' | 'varNames'>): JsonMap =>
  Object.fromEntries(
    Object.entries(ex.context).filter(
      ([k]) => k !== '__execution' && k !== 'openstack' && !ex.varNames.includes(k),
    ),
  );
