import { ConflictError, InvalidInputError } from '@osc/errors';

/** Anything that runs SQL: a DataSource, or a transaction's EntityManager inside a transaction. */
export interface EnvironmentSqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>;
}

/** One stored environment. */
export interface EnvironmentRecord {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  /** Null when the environment was created without variables (Mistral keeps them null too). */
  readonly variables: Record<string, unknown> | null;
  readonly scope: 'private' | 'public';
  readonly projectId: string;
  readonly createdAt: Date;
  readonly updatedAt: Date | null;
}

export type NewEnvironment = Omit<EnvironmentRecord, 'id' | 'updatedAt'>;

/** What an update may change; an absent key keeps the stored value, null clears a nullable one. */
export interface EnvironmentChanges {
  readonly description?: string | null;
  readonly variables?: Record<string, unknown> | null;
  readonly scope?: 'private' | 'public';
}

type Row = Record<string, unknown>;
const date = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v));
const objOrNull = (v: unknown): Record<string, unknown> | null =>
  v === null || v === undefined
    ? null
    : ((typeof v === 'string' ? JSON.parse(v) : v) as Record<string, unknown>);
/** TypeORM's PostgreSQL drivers answer UPDATE/DELETE … RETURNING with `[rows, count]`. */
const returned = (result: unknown): Row[] =>
  Array.isArray(result) && Array.isArray(result[0]) ? (result[0] as Row[]) : (result as Row[]);
const sqlCode = (err: unknown): unknown => {
  const e = err as { code?: unknown; driverError?: { code?: unknown } } | null;
  return e?.code ?? e?.driverError?.code;
};

/** A raw `environments` row as a record. */
export const toEnvironment = (r: Row): EnvironmentRecord => ({
  id: String(r['id']),
  name: String(r['name']),
  description: r['description'] === null || r['description'] === undefined ? null : String(r['description']),
  variables: objOrNull(r['variables']),
  scope: r['scope'] === 'public' ? 'public' : 'private',
  projectId: String(r['project_id']),
  createdAt: date(r['created_at']) as Date,
  updatedAt: date(r['updated_at']),
});

/** Inserts an environment; the same name twice in one project is Mistral's 409. */
export async function insertEnvironment(
  db: EnvironmentSqlRunner,
  e: NewEnvironment,
): Promise<EnvironmentRecord> {
  try {
    const rows: Row[] = await db.query(
      `INSERT INTO "environments" ("name", "description", "variables", "scope", "project_id", "created_at")
       VALUES ($1, $2, $3::jsonb, $4, $5, $6::timestamptz)
       RETURNING *`,
      [
        e.name,
        e.description,
        e.variables === null ? null : JSON.stringify(e.variables),
        e.scope,
        e.projectId,
        e.createdAt.toISOString(),
      ],
    );
    return toEnvironment(rows[0] as Row);
  } catch (err) {
    if (sqlCode(err) === '23505') {
      throw new ConflictError(
        `Duplicate entry for Environment ['name', 'project_id']: ${e.name}, ${e.projectId}`,
      );
    }
    throw err;
  }
}

/**
 * The environment called `name` that `projectId` sees: its own, else a public one of another project
 * (Mistral's secure query by name; Mistral takes whichever comes first, we prefer the caller's own).
 * `lock` takes the row lock (update and delete).
 */
export async function findEnvironment(
  db: EnvironmentSqlRunner,
  name: string,
  projectId: string,
  opts: { lock?: boolean } = {},
): Promise<EnvironmentRecord | null> {
  const rows: Row[] = await db.query(
    `SELECT * FROM "environments" WHERE "name" = $1 AND ("project_id" = $2 OR "scope" = 'public')
     ORDER BY ("project_id" = $2) DESC, "created_at", "id" LIMIT 1${opts.lock ? ' FOR UPDATE' : ''}`,
    [name, projectId],
  );
  return rows[0] ? toEnvironment(rows[0]) : null;
}

/** Applies `changes` to the environment `id` and stamps `updated_at`. */
export async function updateEnvironment(
  db: EnvironmentSqlRunner,
  id: string,
  changes: EnvironmentChanges,
  now: Date,
): Promise<EnvironmentRecord> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  const set = (column: string, value: unknown, cast = '') => {
    params.push(value);
    sets.push(`"${column}" = $${params.length}${cast}`);
  };
  if (changes.description !== undefined) set('description', changes.description);
  if (changes.variables !== undefined)
    set('variables', changes.variables === null ? null : JSON.stringify(changes.variables), '::jsonb');
  if (changes.scope !== undefined) set('scope', changes.scope);
  set('updated_at', now.toISOString(), '::timestamptz');
  const rows = returned(
    await db.query(`UPDATE "environments" SET ${sets.join(', ')} WHERE "id" = $1::uuid RETURNING *`, params),
  );
  return toEnvironment(rows[0] as Row);
}

export async function deleteEnvironment(db: EnvironmentSqlRunner, id: string): Promise<void> {
  await db.query(`DELETE FROM "environments" WHERE "id" = $1::uuid`, [id]);
}

/**
 * Mistral's `_get_environment` for a new execution's params: an `env` that is a string names a stored
 * environment (the project's own, or a public one) and is replaced by that environment's variables;
 * an empty string is no environment. Objects and absent envs are returned as they are. Mistral
 * resolves the name when the execution starts — for cron and event triggers at firing time, in the
 * trigger's project. An unknown name is Mistral's `Environment is not found: <name>` (400).
 */
export async function resolveNamedEnvironment(
  db: EnvironmentSqlRunner,
  projectId: string,
  params: Readonly<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  const env = params['env'];
  if (typeof env !== 'string') return { ...params };
  if (env === '') return { ...params, env: {} };
  const found = await findEnvironment(db, env, projectId);
  if (!found) throw new InvalidInputError(`Environment is not found: ${env}`);
  return { ...params, env: found.variables ?? {} };
}
