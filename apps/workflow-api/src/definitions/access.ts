import { ForbiddenError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import type { DefinitionTable, Visibility } from '@osc/workflow-persistence';

/** Rows a caller may read: admins all, others their project's plus public ones. */
export const visibilityOf = (ctx: RequestContext): Visibility =>
  ctx.isAdmin ? { kind: 'all' } : { kind: 'project', projectId: ctx.projectId };

/**
 * Changes are for the owner (or an admin): a public row of another project is readable but not
 * writable (Mistral's `check_db_obj_access`).
 */
export function checkOwner(
  ctx: RequestContext,
  table: DefinitionTable,
  row: { id?: unknown; project_id?: unknown },
): void {
  if (!ctx.isAdmin && row.project_id !== ctx.projectId) {
    throw new ForbiddenError(
      `Can not access ${table.model} resource of other projects, ID: ${String(row.id)}`,
    );
  }
}
