import { InvalidInputError } from '@osc/errors';
import { ActionException, type ActionImplementation, type ResolvedActionsConfig, success } from './action';
import { JavaScriptError, type JavaScriptLimits, sharedJavaScriptSandbox } from './std/javascript-sandbox';

/** The reference class of dynamic actions, named in their error texts (DSL-14.3). */
export const DYNAMIC_ACTION_CLASS = 'mistral.actions.dynamic_action.DynamicAction';

/** What running a dynamic action needs: its name, the class it names and its code source's text. */
export interface DynamicActionDefinition {
  readonly name: string;
  readonly className: string;
  readonly codeSource: { readonly name: string; readonly content: string };
}

/** The module file name of a code source in the sandbox (error positions name it). */
export const codeSourceFileName = (codeSourceName: string): string => `${codeSourceName}.js`;

/**
 * Checks a code source at upload: it must compile as an ES module (syntax, and no `import`: the
 * sandbox has no modules to give). Nothing of it runs. Throws `InvalidInputError`
 * `Invalid code source <name>: SyntaxError: <what> (line L, column C)`.
 */
export async function checkCodeSource(
  name: string,
  content: string,
  limits: JavaScriptLimits,
): Promise<void> {
  try {
    await sharedJavaScriptSandbox().checkModule(content, codeSourceFileName(name), limits);
  } catch (e) {
    if (e instanceof JavaScriptError)
      throw new InvalidInputError(`Invalid code source ${name}: ${e.message}`);
    throw e;
  }
}

/**
 * The context object `run(context)` receives: Mistral's action context (`execution`, `security`) with
 * its snake_case keys, without the credentials (no auth token is handed to user code).
 */
const actionContextOf = (scope: Parameters<ActionImplementation['run']>[1]) => ({
  execution: {
    workflow_name: scope.ctx.workflowName,
    workflow_namespace: scope.ctx.workflowNamespace,
    workflow_execution_id: scope.ctx.workflowExecutionId,
    root_execution_id: scope.ctx.rootExecutionId,
    task_execution_id: scope.ctx.taskExecutionId,
    task_name: scope.ctx.taskName,
    action_execution_id: scope.ctx.actionExecutionId,
  },
  security: { project_id: scope.ctx.projectId },
});

/**
 * A dynamic action as an action implementation: in the std.javascript sandbox (QuickJS on worker
 * threads, same time, memory and stack limits; the task `timeout` shortens the time limit), the code
 * source is loaded as an ES module, its export `className` is constructed with the action input
 * and `run(context)` is awaited; the (JSON) value is the result. Anything thrown, a missing class or
 * `run`, a limit hit, becomes the action's ERROR result.
 */
export function dynamicActionImplementation(
  def: DynamicActionDefinition,
  config: ResolvedActionsConfig,
): ActionImplementation {
  return {
    name: def.name,
    className: DYNAMIC_ACTION_CLASS,
    run: async (input, scope) => {
      const timeLimitMs =
        scope.ctx.timeoutMs !== undefined
          ? Math.min(scope.ctx.timeoutMs, config.javascript.timeLimitMs)
          : config.javascript.timeLimitMs;
      try {
        return success(
          await sharedJavaScriptSandbox().runModule(
            {
              source: def.codeSource.content,
              filename: codeSourceFileName(def.codeSource.name),
              className: def.className,
              input,
              context: actionContextOf(scope),
            },
            { ...config.javascript, timeLimitMs },
            scope.signal,
          ),
        );
      } catch (e) {
        throw new ActionException(e instanceof Error ? e.message : String(e));
      }
    },
  };
}
