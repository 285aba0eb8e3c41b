import type { DataSource } from 'typeorm';
import { DslValidationError } from '@osc/workflow-domain';
import {
  type DefinitionTable,
  type JsonPage,
  listDefinitionsJson,
  markerValues,
} from '@osc/workflow-persistence';
import { translateDbError } from './db-errors';
import type { ListRequest } from './list-params';

/** `fn`, with a database error turned into the API's error (`conflict` for a unique violation). */
export async function dbGuarded<R>(conflict: string, fn: () => Promise<R>): Promise<R> {
  try {
    return await fn();
  } catch (err) {
    throw translateDbError(err, conflict);
  }
}

/**
 * One page of a definition list (`GET /v2/workflows`, `/v2/actions`, `/v2/workbooks`): the rows after
 * the `marker` row in the requested order; a marker that names no visible row is `markerNotFound`.
 */
export async function listDefinitionPage(
  db: DataSource,
  table: DefinitionTable,
  req: ListRequest,
  markerNotFound: (marker: string) => Error,
): Promise<JsonPage> {
  let after: Record<string, string | null> | undefined;
  if (req.marker !== undefined) {
    const marker = req.marker;
    const m = await dbGuarded('', () =>
      markerValues(
        db,
        table,
        marker,
        req.sort.map((s) => s.key),
        req.visibility,
      ),
    );
    if (!m) throw markerNotFound(marker);
    after = m;
  }
  return dbGuarded('', () => listDefinitionsJson(db, table, { ...req, ...(after ? { after } : {}) }));
}

/** A `validate` endpoint's verdict on `text`: never an error status for invalid DSL. */
export function validateDefinitionText(
  parse: (text: string) => unknown,
  text: string,
): { valid: true } | { valid: false; error: string } {
  try {
    parse(text);
    return { valid: true };
  } catch (err) {
    if (err instanceof DslValidationError) return { valid: false, error: err.message };
    throw err;
  }
}
