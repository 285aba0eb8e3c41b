import { ConflictError } from '@osc/errors';

/** Anything that runs SQL: a DataSource, or a transaction's EntityManager inside a transaction. */
export interface DynamicActionSqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>;
}

export type Scope = 'private' | 'public';

/** One stored code source: a JavaScript module whose exported classes dynamic actions name. */
export interface CodeSourceRecord {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly content: string;
  /** 1 at creation, +1 at every update (Mistral's `version`). */
  readonly version: number;
  readonly scope: Scope;
  readonly projectId: string;
  readonly createdAt: Date;
  readonly updatedAt: Date | null;
}

export type NewCodeSource = Omit<CodeSourceRecord, 'id' | 'version' | 'updatedAt'>;

type Row = Record<string, unknown>;
export const UUID_LIKE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const date = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v));
/** TypeORM's PostgreSQL drivers answer UPDATE/DELETE … RETURNING with `[rows, count]`. */
export const returnedRows = (result: unknown): Row[] =>
  Array.isArray(result) && Array.isArray(result[0]) ? (result[0] as Row[]) : (result as Row[]);
export const sqlCode = (err: unknown): unknown => {
  const e = err as { code?: unknown; driverError?: { code?: unknown } } | null;
  return e?.code ?? e?.driverError?.code;
};

/** A raw `code_sources` row as a record. */
export const toCodeSource = (r: Row): CodeSourceRecord => ({
  id: String(r['id']),
  name: String(r['name']),
  namespace: String(r['namespace'] ?? ''),
  content: String(r['content'] ?? ''),
  version: Number(r['version']),
  scope: r['scope'] === 'public' ? 'public' : 'private',
  projectId: String(r['project_id']),
  createdAt: date(r['created_at']) as Date,
  updatedAt: date(r['updated_at']),
});

/** Mistral's duplicate message for a code source (its DBDuplicateEntryError text). */
export const codeSourceDuplicateMessage = (name: string, namespace: string, projectId: string): string =>
  `Duplicate entry for CodeSource ['name', 'namespace', 'project_id']: ${name}, ${namespace}, ${projectId}`;

/** Inserts a code source at version 1; the same (name, namespace) twice in a project is a 409. */
export async function insertCodeSource(
  db: DynamicActionSqlRunner,
  c: NewCodeSource,
): Promise<CodeSourceRecord> {
  try {
    const rows: Row[] = await db.query(
      `INSERT INTO "code_sources" ("name", "namespace", "content", "version", "scope", "project_id", "created_at")
       VALUES ($1, $2, $3, 1, $4, $5, $6::timestamptz) RETURNING *`,
      [c.name, c.namespace, c.content, c.scope, c.projectId, c.createdAt.toISOString()],
    );
    return toCodeSource(rows[0] as Row);
  } catch (err) {
    if (sqlCode(err) === '23505')
      throw new ConflictError(codeSourceDuplicateMessage(c.name, c.namespace, c.projectId));
    throw err;
  }
}

/**
 * Mistral's `_get_db_object_by_name_and_namespace_or_id` over the rows `projectId` sees (its own and
 * public ones): `identifier` is an id, or a name in exactly `namespace`. The caller's own row wins
 * over a public one of another project. `lock` takes the row lock (update and delete).
 */
export async function findCodeSource(
  db: DynamicActionSqlRunner,
  identifier: string,
  namespace: string,
  projectId: string,
  opts: { lock?: boolean } = {},
): Promise<CodeSourceRecord | null> {
  const byId = UUID_LIKE.test(identifier) ? `"id" = $1::uuid OR ` : '';
  const rows: Row[] = await db.query(
    `SELECT * FROM "code_sources"
      WHERE (${byId}("name" = $1::text AND "namespace" = $2)) AND ("project_id" = $3 OR "scope" = 'public')
      ORDER BY ("project_id" = $3) DESC, "created_at", "id" LIMIT 1${opts.lock ? ' FOR UPDATE' : ''}`,
    [identifier, namespace, projectId],
  );
  return rows[0] ? toCodeSource(rows[0]) : null;
}

/** Replaces content and scope, bumps `version` and stamps `updated_at` (Mistral's `update_code_source`). */
export async function updateCodeSource(
  db: DynamicActionSqlRunner,
  id: string,
  changes: { readonly content: string; readonly scope: Scope },
  now: Date,
): Promise<CodeSourceRecord> {
  const rows = returnedRows(
    await db.query(
      `UPDATE "code_sources" SET "content" = $2, "scope" = $3, "version" = "version" + 1, "updated_at" = $4::timestamptz
        WHERE "id" = $1::uuid RETURNING *`,
      [id, changes.content, changes.scope, now.toISOString()],
    ),
  );
  return toCodeSource(rows[0] as Row);
}

/** Deletes a code source; its dynamic actions go with it (foreign key ON DELETE CASCADE, as in Mistral). */
export async function deleteCodeSource(db: DynamicActionSqlRunner, id: string): Promise<void> {
  await db.query(`DELETE FROM "code_sources" WHERE "id" = $1::uuid`, [id]);
}
