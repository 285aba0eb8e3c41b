export { ExpressionError, type ExpressionLanguage } from './errors';
export type { ExpressionHost, TasksFilter, ExecutionsFilter } from './host';
export { evaluateYaql } from './yaql/engine';
