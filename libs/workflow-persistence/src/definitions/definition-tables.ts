/**
 * How each definitions table looks to the API: the wire name of every field, its column and its kind.
 * Kinds decide casts (filters, keyset markers) and formatting (timestamps as `YYYY-MM-DD HH:MM:SS`).
 */
export type ColumnKind = 'text' | 'uuid' | 'timestamp' | 'bool' | 'tags';

export interface DefinitionColumn {
  readonly column: string;
  readonly kind: ColumnKind;
  readonly nullable: boolean;
}

export interface DefinitionTable {
  readonly table: string;
  /** Mistral's model class name, used in access errors (`Can not access WorkflowDefinition ...`). */
  readonly model: string;
  /** Wire fields in response order. */
  readonly fields: readonly string[];
  readonly columns: Readonly<Record<string, DefinitionColumn>>;
  /** ON CONFLICT target matching the unique (project, namespace, name) index. */
  readonly uniqueKey: string;
}

const col = (column: string, kind: ColumnKind = 'text', nullable = false): DefinitionColumn => ({
  column,
  kind,
  nullable,
});

export const WORKFLOW_DEFINITIONS: DefinitionTable = {
  table: 'workflow_definitions',
  model: 'WorkflowDefinition',
  uniqueKey: '("project_id", "namespace", "name")',
  fields: [
    'id',
    'name',
    'namespace',
    'input',
    'interface',
    'definition',
    'checksum',
    'tags',
    'scope',
    'project_id',
    'created_at',
    'updated_at',
  ],
  columns: {
    id: col('id', 'uuid'),
    name: col('name'),
    namespace: col('namespace'),
    input: col('input'),
    interface: col('interface'),
    definition: col('definition'),
    checksum: col('checksum'),
    tags: col('tags', 'tags'),
    scope: col('scope'),
    project_id: col('project_id'),
    created_at: col('created_at', 'timestamp'),
    updated_at: col('updated_at', 'timestamp', true),
  },
};

export const WORKBOOKS: DefinitionTable = {
  table: 'workbooks',
  model: 'Workbook',
  uniqueKey: '("project_id", "namespace", "name")',
  fields: [
    'id',
    'name',
    'namespace',
    'definition',
    'tags',
    'scope',
    'project_id',
    'created_at',
    'updated_at',
  ],
  columns: {
    id: col('id', 'uuid'),
    name: col('name'),
    namespace: col('namespace'),
    definition: col('definition'),
    tags: col('tags', 'tags'),
    scope: col('scope'),
    project_id: col('project_id'),
    created_at: col('created_at', 'timestamp'),
    updated_at: col('updated_at', 'timestamp', true),
  },
};

export const ACTION_DEFINITIONS: DefinitionTable = {
  table: 'action_definitions',
  model: 'ActionDefinition',
  uniqueKey: `((COALESCE("project_id", '')), "namespace", "name")`,
  fields: [
    'id',
    'name',
    'is_system',
    'input',
    'description',
    'tags',
    'definition',
    'scope',
    'project_id',
    'created_at',
    'updated_at',
    'namespace',
  ],
  columns: {
    id: col('id', 'uuid'),
    name: col('name'),
    is_system: col('is_system', 'bool'),
    input: col('input', 'text', true),
    description: col('description', 'text', true),
    tags: col('tags', 'tags'),
    definition: col('definition'),
    scope: col('scope'),
    project_id: col('project_id', 'text', true),
    created_at: col('created_at', 'timestamp'),
    updated_at: col('updated_at', 'timestamp', true),
    namespace: col('namespace'),
  },
};
