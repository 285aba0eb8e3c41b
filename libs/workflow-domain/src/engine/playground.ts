import {
  ExpressionError,
  type ExpressionHost,
  type ExpressionLanguage,
  containsExpression,
} from '@osc/expressions';
import { buildHost, evaluateWith } from './expression-context';
import type { ExecutionSnapshot, JsonMap, TaskExecution } from './model';
import { isCompleted } from './states';

/** Where an expression of the playground is evaluated: an execution's data and host, for one task or none. */
export interface ExpressionScope {
  readonly data: JsonMap;
  readonly host: ExpressionHost;
}

/**
 * The context the engine gives a task's expressions (DSL-9.2, DSL-9.6), for evaluating an
 * expression against a real execution (the playground, our extension):
 * - a task not completed: what its action input and `with-items` see (marker › env › inbound
 *   context › published globals › input), `task()` being that task;
 * - a completed task: what its transitions see, its published variables on top;
 * - no task: the execution's own data (input, vars and published globals, env).
 * `execution()`, `env()`, `tasks()` and `executions()` answer as in the engine. Pure.
 */
export function expressionScope(
  snapshot: ExecutionSnapshot,
  task: TaskExecution | null,
  now: Date,
  newId: () => string,
): ExpressionScope {
  const ex = snapshot.execution;
  const env = ex.params['env'];
  const envMap = env && typeof env === 'object' && !Array.isArray(env) ? (env as JsonMap) : {};
  const host = buildHost(
    {
      execution: ex,
      tasks: () => snapshot.tasks,
      actions: () => snapshot.actions,
      now,
      newId,
      ...(snapshot.world ? { world: snapshot.world } : {}),
    },
    task ?? undefined,
  );
  if (!task) return { data: { ...ex.input, ...ex.context, __env: envMap }, host };
  return {
    data: {
      ...ex.input,
      ...ex.context,
      ...task.inContext,
      ...(isCompleted(task.state) ? task.published : {}),
      __env: envMap,
      __task_execution: { id: task.id, name: task.name },
    },
    host,
  };
}

/** What the playground answers: the value, or the failure with where it is in the text sent. */
export type PlaygroundOutcome =
  | { readonly result: unknown }
  | {
      readonly error: {
        readonly message: string;
        readonly language: ExpressionLanguage;
        readonly expression: string;
        /** 0-based offset of a syntax error in the text sent; null when the failure has no place (evaluation). */
        readonly position: number | null;
      };
    };

/**
 * Evaluates `text` in `scope`: text with `<% %>`, `{{ }}` or `{% %}` is evaluated as a value of a
 * workflow definition would be (several expressions render into a string); bare text is one
 * expression of `language`. A failure of the expression is an outcome, not an exception; the
 * position of a syntax error is mapped back onto `text`.
 */
export function evaluatePlayground(
  text: string,
  language: ExpressionLanguage,
  scope: ExpressionScope,
): PlaygroundOutcome {
  const value = containsExpression(text) ? text : language === 'yaql' ? `<% ${text} %>` : `{{ ${text} }}`;
  try {
    return { result: evaluateWith(value, scope.data, scope.host) ?? null };
  } catch (e) {
    if (!(e instanceof ExpressionError)) throw e;
    const inner = e.expression.trim();
    const lead = e.expression.length - e.expression.trimStart().length;
    const at = inner ? text.indexOf(inner) : -1;
    const position =
      e.position === null || at < 0 ? null : Math.min(text.length, Math.max(0, at + e.position - lead));
    return { error: { message: e.message, language: e.language, expression: inner, position } };
  }
}
