import { queryNamed } from '../executions/prepared-statements';
import type { SqlRunner, Visibility } from './definition-store';
import { acceptedWorkflowSql } from './member-store';

/**
 * What the engine needs to start a workflow: identity, owner and the parsed spec stored with it (not
 * the definition's text, which no start reads).
 */
export interface StoredWorkflow {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly projectId: string;
  readonly scope: 'private' | 'public';
  readonly spec: unknown;
}

const visible = (v: Visibility, param: string): string =>
  v.kind === 'all' ? 'TRUE' : `("project_id" = ${param} OR "scope" = 'public')`;

/** Workflows may also be shared with the caller's project (accepted membership). */
const visibleWorkflow = (v: Visibility, param: string): string =>
  v.kind === 'all'
    ? 'TRUE'
    : `("project_id" = ${param} OR "scope" = 'public' OR ${acceptedWorkflowSql(param)})`;

const UUID_LIKE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/**
 * A workflow by UUID, or by name in `namespace` falling back to the default namespace (DSL-7.6),
 * preferring the caller's own row over a public one; null when nothing visible matches.
 */
export async function findWorkflowForRun(
  db: SqlRunner,
  ref: {
    readonly identifier: string;
    readonly namespace: string;
    readonly projectId: string;
    readonly visibility: Visibility;
  },
): Promise<StoredWorkflow | null> {
  const params: unknown[] = [ref.identifier, ref.namespace, ref.projectId];
  const byId = UUID_LIKE.test(ref.identifier) ? `"id" = $1::uuid OR ` : '';
  // every POST /v2/executions runs it: a named statement, planned once (`queryNamed`)
  const rows = (await queryNamed(
    db,
    `SELECT "id", "name", "namespace", "project_id" AS "projectId", "scope", "spec" FROM "workflow_definitions"
      WHERE (${byId}("name" = $1::text AND "namespace" IN ($2, ''))) AND ${visibleWorkflow(ref.visibility, '$3')}
      ORDER BY ("namespace" = $2) DESC, ("project_id" = $3) DESC LIMIT 1`,
    params,
  )) as unknown as StoredWorkflow[];
  return rows[0] ?? null;
}

/** An ad-hoc action's parsed spec by name (namespace first, then the default one); null if none. */
export async function findAdHocActionSpec(
  db: SqlRunner,
  ref: {
    readonly name: string;
    readonly namespace: string;
    readonly projectId: string;
    readonly visibility: Visibility;
  },
): Promise<{
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly spec: unknown;
} | null> {
  const rows: { id: string; name: string; namespace: string; spec: unknown }[] = await db.query(
    `SELECT "id", "name", "namespace", "spec" FROM "action_definitions"
      WHERE "name" = $1 AND "namespace" IN ($2, '') AND NOT "is_system" AND ${visible(ref.visibility, '$3')}
      ORDER BY ("namespace" = $2) DESC, ("project_id" = $3) DESC LIMIT 1`,
    [ref.name, ref.namespace, ref.projectId],
  );
  return rows[0] ?? null;
}

/** A standard action as stored for listing: name, description and its API `input` string. */
export interface SystemActionRow {
  readonly name: string;
  readonly description: string;
  readonly input: string;
}

/**
 * Makes the stored system actions equal to `actions`: inserts new ones (scope public, no project),
 * refreshes description and input of existing ones (keeping their id and creation time) and removes
 * ones no longer standard. Idempotent and safe when several replicas start at once.
 */
export async function syncSystemActions(
  db: SqlRunner,
  actions: readonly SystemActionRow[],
  now: Date,
): Promise<void> {
  for (const a of actions) {
    await db.query(
      `INSERT INTO "action_definitions" ("name", "namespace", "project_id", "scope", "definition", "description", "input", "spec", "tags", "is_system", "created_at")
       VALUES ($1, '', NULL, 'public', '', $2, $3, NULL, '[]'::jsonb, TRUE, $4::timestamptz)
       ON CONFLICT ((COALESCE("project_id", '')), "namespace", "name")
       DO UPDATE SET "description" = EXCLUDED."description", "input" = EXCLUDED."input"
       WHERE "action_definitions"."is_system" AND ("action_definitions"."description" IS DISTINCT FROM EXCLUDED."description"
         OR "action_definitions"."input" IS DISTINCT FROM EXCLUDED."input")`,
      [a.name, a.description, a.input, toSeconds(now).toISOString()],
    );
  }
  const names = actions.map((_, i) => `$${i + 1}`).join(', ');
  await db.query(
    `DELETE FROM "action_definitions" WHERE "is_system"${actions.length ? ` AND "name" NOT IN (${names})` : ''}`,
    actions.map((a) => a.name),
  );
}

/** Mistral stores creation and update times with whole seconds. */
export const toSeconds = (d: Date): Date => new Date(Math.floor(d.getTime() / 1000) * 1000);
