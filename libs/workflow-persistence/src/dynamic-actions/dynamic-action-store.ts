import { ConflictError } from '@osc/errors';
import {
  type CodeSourceRecord,
  type DynamicActionSqlRunner,
  type Scope,
  UUID_LIKE,
  returnedRows,
  sqlCode,
  toCodeSource,
} from './code-source-store';

/** One stored dynamic action: a name bound to a class exported by a code source. */
export interface DynamicActionRecord {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly className: string;
  readonly codeSourceId: string;
  readonly codeSourceName: string;
  readonly scope: Scope;
  readonly projectId: string;
  readonly createdAt: Date;
  readonly updatedAt: Date | null;
}

export type NewDynamicAction = Omit<DynamicActionRecord, 'id' | 'updatedAt'>;

/** What an update may change; an absent key keeps the stored value. */
export interface DynamicActionChanges {
  readonly className?: string;
  readonly scope?: Scope;
  readonly codeSource?: { readonly id: string; readonly name: string };
}

type Row = Record<string, unknown>;
const date = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v));

/** A raw `dynamic_action_definitions` row as a record. */
export const toDynamicAction = (r: Row): DynamicActionRecord => ({
  id: String(r['id']),
  name: String(r['name']),
  namespace: String(r['namespace'] ?? ''),
  className: String(r['class_name']),
  codeSourceId: String(r['code_source_id']),
  codeSourceName: String(r['code_source_name']),
  scope: r['scope'] === 'public' ? 'public' : 'private',
  projectId: String(r['project_id']),
  createdAt: date(r['created_at']) as Date,
  updatedAt: date(r['updated_at']),
});

/** Mistral's duplicate message for a dynamic action. */
export const dynamicActionDuplicateMessage = (name: string, namespace: string, projectId: string): string =>
  `Duplicate entry for dynamic action definition [name=${name}, namespace=${namespace}, project_id=${projectId}]`;

export async function insertDynamicAction(
  db: DynamicActionSqlRunner,
  a: NewDynamicAction,
): Promise<DynamicActionRecord> {
  try {
    const rows: Row[] = await db.query(
      `INSERT INTO "dynamic_action_definitions"
         ("name", "namespace", "class_name", "code_source_id", "code_source_name", "scope", "project_id", "created_at")
       VALUES ($1, $2, $3, $4::uuid, $5, $6, $7, $8::timestamptz) RETURNING *`,
      [
        a.name,
        a.namespace,
        a.className,
        a.codeSourceId,
        a.codeSourceName,
        a.scope,
        a.projectId,
        a.createdAt.toISOString(),
      ],
    );
    return toDynamicAction(rows[0] as Row);
  } catch (err) {
    if (sqlCode(err) === '23505')
      throw new ConflictError(dynamicActionDuplicateMessage(a.name, a.namespace, a.projectId));
    throw err;
  }
}

/**
 * A dynamic action by id, or by name in exactly `namespace`, among the rows `projectId` sees (its
 * own first, then public ones), as Mistral's `get_dynamic_action_definition`.
 */
export async function findDynamicAction(
  db: DynamicActionSqlRunner,
  identifier: string,
  namespace: string,
  projectId: string,
  opts: { lock?: boolean } = {},
): Promise<DynamicActionRecord | null> {
  const byId = UUID_LIKE.test(identifier) ? `"id" = $1::uuid OR ` : '';
  const rows: Row[] = await db.query(
    `SELECT * FROM "dynamic_action_definitions"
      WHERE (${byId}("name" = $1::text AND "namespace" = $2)) AND ("project_id" = $3 OR "scope" = 'public')
      ORDER BY ("project_id" = $3) DESC, "created_at", "id" LIMIT 1${opts.lock ? ' FOR UPDATE' : ''}`,
    [identifier, namespace, projectId],
  );
  return rows[0] ? toDynamicAction(rows[0]) : null;
}

export async function updateDynamicAction(
  db: DynamicActionSqlRunner,
  id: string,
  changes: DynamicActionChanges,
  now: Date,
): Promise<DynamicActionRecord> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  const set = (column: string, value: unknown, cast = '') => {
    params.push(value);
    sets.push(`"${column}" = $${params.length}${cast}`);
  };
  if (changes.className !== undefined) set('class_name', changes.className);
  if (changes.scope !== undefined) set('scope', changes.scope);
  if (changes.codeSource !== undefined) {
    set('code_source_id', changes.codeSource.id, '::uuid');
    set('code_source_name', changes.codeSource.name);
  }
  set('updated_at', now.toISOString(), '::timestamptz');
  const rows = returnedRows(
    await db.query(
      `UPDATE "dynamic_action_definitions" SET ${sets.join(', ')} WHERE "id" = $1::uuid RETURNING *`,
      params,
    ),
  );
  return toDynamicAction(rows[0] as Row);
}

export async function deleteDynamicAction(db: DynamicActionSqlRunner, id: string): Promise<void> {
  await db.query(`DELETE FROM "dynamic_action_definitions" WHERE "id" = $1::uuid`, [id]);
}

/** A dynamic action ready to run: its definition and its code source's current text. */
export interface RunnableDynamicAction {
  readonly action: DynamicActionRecord;
  readonly codeSource: CodeSourceRecord;
}

/**
 * The dynamic action a workflow task names, for the executor: by name in `namespace`, then in the
 * default namespace (as ad-hoc actions resolve, DSL-7.6), among the rows `projectId` sees (its own
 * first), with the code source's current content (Mistral reloads a module whose version moved on).
 */
export async function findRunnableDynamicAction(
  db: DynamicActionSqlRunner,
  ref: { readonly name: string; readonly namespace: string; readonly projectId: string },
): Promise<RunnableDynamicAction | null> {
  const rows: Row[] = await db.query(
    `SELECT to_jsonb(d) AS "action", to_jsonb(c) AS "source"
       FROM "dynamic_action_definitions" d JOIN "code_sources" c ON c."id" = d."code_source_id"
      WHERE d."name" = $1 AND d."namespace" IN ($2, '') AND (d."project_id" = $3 OR d."scope" = 'public')
      ORDER BY (d."namespace" = $2) DESC, (d."project_id" = $3) DESC LIMIT 1`,
    [ref.name, ref.namespace, ref.projectId],
  );
  const row = rows[0];
  if (!row) return null;
  const json = (v: unknown): Row => (typeof v === 'string' ? (JSON.parse(v) as Row) : (v as Row));
  return { action: toDynamicAction(json(row['action'])), codeSource: toCodeSource(json(row['source'])) };
}
