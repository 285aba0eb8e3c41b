import type { SqlRunner } from './definition-store';

/** Mistral's member states: the owner shares (pending), the member project accepts or rejects. */
export const MEMBER_STATUSES = ['pending', 'accepted', 'rejected'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

/** A member row in wire form (timestamps `YYYY-MM-DD HH:MM:SS`, `updated_at` null until changed). */
export interface MemberRow {
  readonly id: string;
  readonly resource_id: string;
  readonly resource_type: 'workflow';
  readonly project_id: string;
  readonly member_id: string;
  readonly status: MemberStatus;
  readonly created_at: string;
  readonly updated_at: string | null;
}

const COLUMNS = `"id"::text AS "id", "resource_id"::text AS "resource_id", "resource_type", "project_id", "member_id", "status",
  ("created_at" AT TIME ZONE 'UTC')::text AS "created_at", ("updated_at" AT TIME ZONE 'UTC')::text AS "updated_at"`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * SQL condition "the row's `id` is a workflow that `projectParam`'s project has accepted" — what
 * Mistral adds to every secure query of workflow definitions besides owner and public rows.
 */
export const acceptedWorkflowSql = (projectParam: string): string =>
  `"id" IN (SELECT "resource_id" FROM "resource_members" WHERE "member_id" = ${projectParam} AND "resource_type" = 'workflow' AND "status" = 'accepted')`;

/** Members of a workflow that `projectId` may see: as the owner (every member) or as a member (itself). */
export async function listMembers(
  db: SqlRunner,
  resourceId: string,
  projectId: string,
): Promise<MemberRow[]> {
  if (!UUID.test(resourceId)) return [];
  return db.query(
    `SELECT ${COLUMNS} FROM "resource_members" WHERE "resource_id" = $1::uuid AND "resource_type" = 'workflow'
       AND ("project_id" = $2 OR "member_id" = $2) ORDER BY "created_at", "id"`,
    [resourceId, projectId],
  );
}

/** One member, seen by the owner or by the member itself; null otherwise. */
export async function findMember(
  db: SqlRunner,
  resourceId: string,
  memberId: string,
  projectId: string,
): Promise<MemberRow | null> {
  if (!UUID.test(resourceId)) return null;
  const rows: MemberRow[] = await db.query(
    `SELECT ${COLUMNS} FROM "resource_members" WHERE "resource_id" = $1::uuid AND "resource_type" = 'workflow'
       AND "member_id" = $2 AND ("project_id" = $3 OR "member_id" = $3)`,
    [resourceId, memberId, projectId],
  );
  return rows[0] ?? null;
}

/** Adds a pending member; null when the (resource, member) pair exists already. */
export async function insertMember(
  db: SqlRunner,
  m: {
    readonly resourceId: string;
    readonly projectId: string;
    readonly memberId: string;
    readonly now: string;
  },
): Promise<MemberRow | null> {
  const rows: MemberRow[] = await db.query(
    `INSERT INTO "resource_members" ("resource_id", "resource_type", "project_id", "member_id", "status", "created_at")
       VALUES ($1::uuid, 'workflow', $2, $3, 'pending', $4::timestamptz)
       ON CONFLICT ("resource_id", "resource_type", "member_id") DO NOTHING
       RETURNING ${COLUMNS}`,
    [m.resourceId, m.projectId, m.memberId, m.now],
  );
  return rows[0] ?? null;
}

/** Sets a member's status (the member's own call); null when no such member. */
export async function updateMemberStatus(
  db: SqlRunner,
  m: {
    readonly resourceId: string;
    readonly memberId: string;
    readonly status: MemberStatus;
    readonly now: string;
  },
): Promise<MemberRow | null> {
  if (!UUID.test(m.resourceId)) return null;
  const rows: MemberRow[] = await db.query(
    // A CTE makes every driver return plain rows for UPDATE ... RETURNING.
    `WITH u AS (UPDATE "resource_members" SET "status" = $3, "updated_at" = $4::timestamptz
       WHERE "resource_id" = $1::uuid AND "resource_type" = 'workflow' AND "member_id" = $2 RETURNING *)
     SELECT ${COLUMNS} FROM u`,
    [m.resourceId, m.memberId, m.status, m.now],
  );
  return rows[0] ?? null;
}

/** Removes a member of a workflow owned by `projectId`; false when there was none. */
export async function deleteMember(
  db: SqlRunner,
  resourceId: string,
  memberId: string,
  projectId: string,
): Promise<boolean> {
  if (!UUID.test(resourceId)) return false;
  const rows: unknown[] = await db.query(
    `WITH d AS (DELETE FROM "resource_members" WHERE "resource_id" = $1::uuid AND "resource_type" = 'workflow'
       AND "member_id" = $2 AND "project_id" = $3 RETURNING "id") SELECT "id" FROM d`,
    [resourceId, memberId, projectId],
  );
  return rows.length > 0;
}
