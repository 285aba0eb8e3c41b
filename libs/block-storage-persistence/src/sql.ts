/** Anything that runs SQL: a DataSource, or a transaction's EntityManager. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<any>;
}

/** Collects positional parameters while a statement is assembled. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

export { affectedOf, returnedRows, rowsOf } from '@osc/persistence';

/** Escapes `%`, `_` and `\` for a LIKE pattern. */
export const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Is this the driver's unique-violation error? */
export const isUniqueViolation = (e: unknown): boolean =>
  (e as { code?: string; driverError?: { code?: string } })?.code === '23505' ||
  (e as { driverError?: { code?: string } })?.driverError?.code === '23505';

/** uuid columns the list filters compare (volumes, snapshots, backups). */
export const UUID_COLUMNS: ReadonlySet<string> = new Set([
  'id',
  'volume_id',
  'volume_type_id',
  'snapshot_id',
  'source_volid',
  'group_id',
  'consistencygroup_id',
  'group_snapshot_id',
  'parent_id',
]);

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Equality of a uuid column with a filter value, as `ref::text = value` answers it (only a UUID in
 * PostgreSQL's lower-case output form can match) but typed, so the column's index serves it: a
 * cast on the column hides it from the planner and the filter read the whole table.
 */
export const uuidColumnEquals = (ref: string, value: string, p: Params): string =>
  UUID_TEXT.test(value) ? `${ref} = ${p.add(value)}::uuid` : 'FALSE';
