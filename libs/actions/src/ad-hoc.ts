import { randomUUID } from 'node:crypto';
import { type ActionContext, type ActionOutcome, type ActionRunner } from '@osc/contracts';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import { evaluate as evaluateExpressions, type ExpressionHost } from '@osc/expressions';
import { type ActionSpec, isStandardAction } from '@osc/workflow-domain';
import { validateActionInput } from './action-input';

/** The reference class path reported for ad-hoc actions in `Invalid input [...]`. */
export const AD_HOC_ACTION_CLASS = 'mistral.actions.adhoc.AdHocAction';

/** What the helper needs of an ad-hoc action definition (the parsed `ActionSpec` of @osc/workflow-domain fits). */
export type AdHocActionDefinition = Pick<
  ActionSpec,
  'name' | 'base' | 'baseInput' | 'input' | 'hasOutput' | 'output'
>;

/** Finds an ad-hoc action by name (namespace and workbook resolution are the caller's, DSL-7.5/7.6). */
export type AdHocActionResolver = (
  name: string,
) => AdHocActionDefinition | undefined | Promise<AdHocActionDefinition | undefined>;

export interface AdHocDependencies {
  resolve: AdHocActionResolver;
  /** Expression evaluation; defaults to `evaluate` of @osc/expressions with `host`. */
  evaluate?: (value: unknown, data: unknown) => unknown;
  host?: ExpressionHost;
  /** Namespace named in the not-found message. */
  namespace?: string;
}

/** The standard action call an ad-hoc action comes down to, and the ad-hoc chain (outermost first). */
export interface AdHocCall {
  baseName: string;
  baseInput: Record<string, unknown>;
  chain: readonly AdHocActionDefinition[];
}

/**
 * What an ad-hoc action's expressions may call without an execution: Mistral evaluates base-input and
 * output against the action's input alone, where yaql's `now()` and Mistral's `uuid()` still answer
 * (`execution()`, `env()`, `task()` ... have nothing to read there and are refused).
 */
const STANDALONE_HOST: ExpressionHost = { now: () => new Date(), uuid: () => randomUUID() };

const evaluatorOf = (deps: Pick<AdHocDependencies, 'evaluate' | 'host'>) =>
  deps.evaluate ??
  ((value: unknown, data: unknown) => evaluateExpressions(value, data, deps.host ?? STANDALONE_HOST));

/**
 * DSL-7.2: checks `input` against the ad-hoc action's declared input (DSL-7.1, same text as for system
 * actions with class `mistral.actions.adhoc.AdHocAction`), then walks the chain: fill the input
 * defaults, evaluate `base-input` against that input layered over `taskData`, and continue with the
 * base until it is a standard action. Throws `InvalidInputError` for bad input or a cycle,
 * `NotFoundError` for a missing base, and the evaluator's `ExpressionError` for a failing expression:
 * all of them are failures of the workflow's own logic (DSL-13.6).
 */
export async function planAdHocCall(
  action: AdHocActionDefinition,
  input: Readonly<Record<string, unknown>>,
  taskData: Readonly<Record<string, unknown>> | undefined,
  deps: AdHocDependencies,
): Promise<AdHocCall> {
  const evaluate = evaluatorOf(deps);
  let current = action;
  let currentInput: Record<string, unknown> = validateActionInput(
    action.name,
    AD_HOC_ACTION_CLASS,
    action.input,
    input,
  );
  const chain: AdHocActionDefinition[] = [action];
  const visited = new Set([action.name]);
  for (;;) {
    for (const p of current.input) {
      if (!p.required && !(p.name in currentInput)) currentInput[p.name] = structuredClone(p.default ?? null);
    }
    const evaluated = evaluate(current.baseInput, { ...(taskData ?? {}), ...currentInput });
    const baseInput = isPlainMap(evaluated) ? evaluated : {};
    const base = current.base;
    if (visited.has(base)) {
      throw new InvalidInputError(
        `Found a cycle in an ad-hoc action chain [action_name=${action.name}, duplicate_action_name=${base}]`,
      );
    }
    visited.add(base);
    const next = isStandardAction(base) ? undefined : await deps.resolve(base);
    if (next === undefined) {
      if (!isStandardAction(base)) {
        throw new NotFoundError(
          'Action',
          base,
          `Failed to find base action [action_name=${base} namespace=${deps.namespace ?? ''}]`,
        );
      }
      return { baseName: base, baseInput, chain };
    }
    chain.push(next);
    current = next;
    currentInput = baseInput;
  }
}

/**
 * DSL-7.3: applies the `output` of each ad-hoc action of the chain to a successful result, deepest
 * first, with the result as the whole context. Error and async outcomes are returned unchanged; a
 * result posted later for an async base action goes through this same function.
 */
export function transformAdHocOutcome(
  chain: readonly AdHocActionDefinition[],
  outcome: ActionOutcome,
  deps: Pick<AdHocDependencies, 'evaluate' | 'host'> = {},
): ActionOutcome {
  if (outcome.kind !== 'success') return outcome;
  const evaluate = evaluatorOf(deps);
  let result = outcome.result;
  for (const def of [...chain].reverse()) {
    if (def.hasOutput) result = evaluate(def.output ?? null, result);
  }
  return { kind: 'success', result };
}

/** Plans, runs the base standard action with `runner`, and transforms its outcome. */
export async function runAdHocAction(
  action: AdHocActionDefinition,
  input: Readonly<Record<string, unknown>>,
  ctx: ActionContext,
  runner: ActionRunner,
  deps: AdHocDependencies,
): Promise<ActionOutcome> {
  const call = await planAdHocCall(action, input, ctx.data, deps);
  const outcome = await runner.run(call.baseName, call.baseInput, ctx);
  return transformAdHocOutcome(call.chain, outcome, deps);
}

const isPlainMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
