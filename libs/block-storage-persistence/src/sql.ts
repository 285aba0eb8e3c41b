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

/** Rows of a SELECT, whatever the driver wraps them in. */
export const rowsOf = <T>(result: unknown): T[] => (Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] })?.rows ?? []));

/**
 * Affected-row count of an UPDATE/DELETE. TypeORM's postgres driver returns `[rows, count]` for
 * them; other shapes are read defensively.
 */
export function affectedOf(result: unknown): number {
  if (Array.isArray(result) && result.length === 2 && typeof result[1] === 'number') return result[1];
  const r = result as { rowCount?: number; affected?: number } | null;
  return r?.rowCount ?? r?.affected ?? 0;
}

/** Rows an UPDATE … RETURNING gave back (TypeORM's postgres driver wraps them as `[rows, count]`). */
export function returnedRows<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && typeof result[1] === 'number') return result[0] as T[];
  return rowsOf<T>(result);
}

/** Escapes `%`, `_` and `\` for a LIKE pattern. */
export const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Is this the driver's unique-violation error? */
export const isUniqueViolation = (e: unknown): boolean => (e as { code?: string; driverError?: { code?: string } })?.code === '23505' || (e as { driverError?: { code?: string } })?.driverError?.code === '23505';
