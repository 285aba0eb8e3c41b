export {
  CreateCodeSourcesAndDynamicActions1765100000000,
  dynamicActionMigrations,
} from './dynamic-actions.migration';
export { workflowDynamicActionsSchema } from './dynamic-actions.schema';
export {
  type DynamicActionSqlRunner,
  type CodeSourceRecord,
  type NewCodeSource,
  toCodeSource,
  codeSourceDuplicateMessage,
  insertCodeSource,
  findCodeSource,
  updateCodeSource,
  deleteCodeSource,
} from './code-source-store';
export {
  type DynamicActionRecord,
  type NewDynamicAction,
  type DynamicActionChanges,
  type RunnableDynamicAction,
  toDynamicAction,
  dynamicActionDuplicateMessage,
  insertDynamicAction,
  findDynamicAction,
  updateDynamicAction,
  deleteDynamicAction,
  findRunnableDynamicAction,
} from './dynamic-action-store';
