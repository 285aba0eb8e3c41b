export {
  WorkflowDefinitionEntity,
  WorkbookEntity,
  ActionDefinitionEntity,
  definitionEntities,
} from './definition.entities';
export {
  CreateDefinitions1763900000000,
  CreateResourceMembers1764200000000,
  definitionMigrations,
} from './definitions.migration';
export {
  MEMBER_STATUSES,
  type MemberStatus,
  type MemberRow,
  acceptedWorkflowSql,
  listMembers,
  findMember,
  insertMember,
  updateMemberStatus,
  deleteMember,
} from './member-store';
export {
  WORKFLOW_DEFINITIONS,
  WORKBOOKS,
  ACTION_DEFINITIONS,
  type DefinitionTable,
  type DefinitionColumn,
  type ColumnKind,
} from './definition-tables';
export {
  type Visibility,
  type ListQuery,
  type DefinitionRow,
  type SqlRunner,
  type FindOptions,
  type ColumnValues,
  listDefinitions,
  listDefinitionsJson,
  type JsonPage,
  markerValues,
  findDefinition,
  insertDefinition,
  updateDefinition,
  upsertDefinition,
  deleteDefinition,
  nameTaken,
  selectList,
} from './definition-store';
export {
  type StoredWorkflow,
  type SystemActionRow,
  findWorkflowForRun,
  findAdHocActionSpec,
  syncSystemActions,
  toSeconds,
} from './definition-lookups';
export { workflowDefinitionsSchema } from './definitions.schema';
