export * from './model';
export { DslValidationError, formatDslIssue, type DslIssue, type DslIssueKind } from './dsl-validation-error';
export {
  parseWorkflows,
  parseWorkbook,
  parseActions,
  workbookMemberDefinitions,
  isSupportedVersion,
  validateDefinition,
  type DefinitionKind,
  type ParseOptions,
  type ParsedWorkflows,
  type WorkbookMemberDefinitions,
} from './documents';
export {
  setExpressionValidator,
  getExpressionValidator,
  checkBalancedDelimiters,
  grammarCheck,
  validateExpressionText,
  isExpression,
  type ExpressionValidator,
} from './expression-syntax';
export {
  parseCommand,
  parseTransitionTarget,
  findInlineParams,
  type ParsedCommand,
  type InlineParams,
} from './inline-params';
export {
  renderInputString,
  workflowInterface,
  actionInputString,
  workflowDefinitionText,
  workbookMemberText,
  dumpYaml,
} from './definition-text';
export { inputListEntries } from './input-list';
export {
  STANDARD_ACTIONS,
  findStandardAction,
  isStandardAction,
  checkActionInput,
  type StandardAction,
} from './standard-actions';
export { md5Hex } from './md5';
export { pyStr, pyRepr, pyJsonDumps } from './python-text';
export {
  resolvePublish,
  taskByName,
  invalidInputMessage,
  workflowSpecClass,
  resolveWorkflowInput,
  reverseTaskClosure,
  type CompletedTaskState,
} from './spec-queries';
export { isUuidLike } from './workflow-parser';
