/**
 * @osc/expressions — YAQL and Jinja evaluation with Mistral's function set (pure, framework-free).
 * Data in and out is plain JSON-like JS; host-specific functions come from an {@link ExpressionHost}.
 */
export { ExpressionError, type ExpressionLanguage } from './errors';
export type { ExpressionHost, TasksFilter, ExecutionsFilter } from './host';
export { evaluateYaql } from './yaql/engine';
export { evaluateJinja } from './jinja/engine';
export {
  evaluate,
  validateExpressions,
  containsExpression,
  prepareContext,
  prepareLayeredContext,
} from './evaluate';
export type { PreparedContext } from './values';
export { pyJsonString } from './mistral-functions';
