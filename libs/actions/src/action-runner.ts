import { type ActionContext, type ActionOutcome, type ActionRunner } from '@osc/contracts';
import { NotFoundError } from '@osc/errors';
import { findStandardAction } from '@osc/workflow-domain';
import {
  ActionAbortedError,
  type ActionClock,
  type ActionImplementation,
  type ActionScope,
  type ActionsConfig,
  type ResolvedActionsConfig,
  failure,
  resolveActionsConfig,
  systemClock,
} from './action';
import { validateActionInput } from './action-input';
import { type DynamicActionDefinition, dynamicActionImplementation } from './dynamic-action';
import { STANDARD_ACTION_IMPLEMENTATIONS } from './std';

/** Python's default repr of an action object; the address is derived from the action execution id. */
const defaultRepr = (className: string, actionExecutionId: string): string =>
  `<${className} object at 0x7f${actionExecutionId
    .replace(/[^0-9a-f]/gi, '')
    .slice(0, 10)
    .padEnd(10, '0')}>`;

/** DSL-14.3: the error text of an action that raised an exception. */
export const actionExceptionText = (
  impl: Pick<ActionImplementation, 'className' | 'repr'>,
  actionExecutionId: string,
  message: string,
): string =>
  `The action raised an exception [action=${impl.repr ?? defaultRepr(impl.className, actionExecutionId)}, ` +
  `action_ex_id=${actionExecutionId}, msg='${message}']`;

/** DSL-13.6: the message of an action name that resolves to nothing. */
export const actionNotFoundMessage = (name: string, namespace: string): string =>
  `Failed to find action [action_name=${name}, namespace=${namespace}]`;

export interface ActionRunnerOptions {
  clock?: ActionClock;
  /** Replaces or adds implementations (by name); every name must be a standard action of @osc/workflow-domain. */
  implementations?: readonly ActionImplementation[];
}

/**
 * Runs the standard actions (DSL-17) for the executor workers. Contract (`ActionRunner` of @osc/contracts):
 * - unknown name → throws `NotFoundError` (`Failed to find action [action_name=…, namespace=…]`);
 * - input with missing required or undeclared parameters → throws `InvalidInputError`
 *   (`Invalid input [name=…, class=…, missing=[…], unexpected=[…]]`); both are fatal task failures;
 * - an action that raises → `{ kind: 'error', error: 'The action raised an exception [...]' }` (DSL-14.3);
 *   `ctx.timeoutMs` elapsed → the same with `msg='Action timed out'`;
 * - `ctx.signal` aborted → throws {@link ActionAbortedError} (no outcome to report);
 * - asynchronous actions (std.async_noop, std.mistral_http) → `{ kind: 'async' }` unless they failed.
 */
export class StandardActionRunner implements ActionRunner {
  private readonly config: ResolvedActionsConfig;
  private readonly clock: ActionClock;
  private readonly implementations = new Map<string, ActionImplementation>();

  constructor(config: ActionsConfig = {}, options: ActionRunnerOptions = {}) {
    this.config = resolveActionsConfig(config);
    this.clock = options.clock ?? systemClock;
    for (const impl of [...STANDARD_ACTION_IMPLEMENTATIONS, ...(options.implementations ?? [])]) {
      if (!findStandardAction(impl.name)) throw new Error(`${impl.name} is not a standard action`);
      this.implementations.set(impl.name, impl);
    }
  }

  has(name: string): boolean {
    return this.implementations.has(name);
  }

  /** The reference class path of a standard action (for messages), if it exists. */
  className(name: string): string | undefined {
    return this.implementations.get(name)?.className;
  }

  async run(name: string, input: Record<string, unknown>, ctx: ActionContext): Promise<ActionOutcome> {
    const impl = this.implementations.get(name);
    const definition = findStandardAction(name);
    if (!impl || !definition) {
      throw new NotFoundError('Action', name, actionNotFoundMessage(name, ctx.workflowNamespace));
    }
    const filled = validateActionInput(name, impl.className, definition.input, input ?? {});
    if (this.config.disabled.has(name)) {
      return failure(
        actionExceptionText(impl, ctx.actionExecutionId, `Action ${name} is disabled by configuration.`),
      );
    }
    return this.execute(impl, filled, ctx);
  }

  /**
   * Runs a dynamic action (code source + class, see dynamic-action.ts) under the same timeout, abort
   * and error rules as a standard action. The input is passed whole to the class's constructor: a
   * JavaScript class declares no parameters to check it against.
   */
  runDynamic(
    def: DynamicActionDefinition,
    input: Record<string, unknown>,
    ctx: ActionContext,
  ): Promise<ActionOutcome> {
    return this.execute(dynamicActionImplementation(def, this.config), input ?? {}, ctx);
  }

  private async execute(
    impl: ActionImplementation,
    filled: Record<string, unknown>,
    ctx: ActionContext,
  ): Promise<ActionOutcome> {
    const name = impl.name;
    if (ctx.signal?.aborted) throw new ActionAbortedError(name);
    // The run's own signal, made when something needs it: a timeout, the caller's signal, or the
    // action reading `scope.signal`. Making and aborting one costs ~15 µs (the abort event and its
    // Error), more than a std.noop run itself; most actions never look at it.
    let controller: AbortController | undefined;
    const control = (): AbortController => (controller ??= new AbortController());
    let timedOut = false;
    const onCallerAbort = (): void => control().abort(ctx.signal?.reason);
    ctx.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const timer =
      ctx.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            control().abort(new Error('Action timed out'));
          }, ctx.timeoutMs)
        : undefined;
    const scope: ActionScope = {
      ctx,
      get signal() {
        return control().signal;
      },
      config: this.config,
      clock: this.clock,
    };
    // The run ends when the action settles or the signal aborts, whichever is first: an action that
    // ignores its signal cannot hold the executor past its timeout. Without a timeout or a caller's
    // signal nothing can abort it before it settles, so no race is set up (the engine's inline
    // std.noop/std.echo runs: one listener and two promises fewer per action).
    const aborted =
      timer !== undefined || ctx.signal !== undefined
        ? new Promise<never>((_, reject) => {
            control().signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          })
        : undefined;
    aborted?.catch(() => undefined);
    try {
      return await (aborted ? Promise.race([impl.run(filled, scope), aborted]) : impl.run(filled, scope));
    } catch (e) {
      if (timedOut) return failure(actionExceptionText(impl, ctx.actionExecutionId, 'Action timed out'));
      if (ctx.signal?.aborted) throw new ActionAbortedError(name);
      return failure(
        actionExceptionText(impl, ctx.actionExecutionId, e instanceof Error ? e.message : String(e)),
      );
    } finally {
      if (timer) clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onCallerAbort);
      // whatever the action left listening on its signal stops now
      if (controller && !controller.signal.aborted) controller.abort(new Error('action finished'));
    }
  }
}

/** One-off convenience over {@link StandardActionRunner} (builds a runner per call; executors keep one). */
export const runAction = (
  name: string,
  input: Record<string, unknown>,
  ctx: ActionContext,
  config?: ActionsConfig,
): Promise<ActionOutcome> => new StandardActionRunner(config).run(name, input, ctx);
