/** Rows of a SELECT, whatever the driver wraps them in. */
export const rowsOf = <T>(result: unknown): T[] =>
  Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] })?.rows ?? []);

/** Is this TypeORM's postgres answer to an UPDATE/DELETE: `[rows, count]`? */
const isWrite = (result: unknown): result is [unknown[], number] =>
  Array.isArray(result) && result.length === 2 && typeof result[1] === 'number';

/**
 * Affected-row count of an UPDATE/DELETE. TypeORM's postgres driver returns `[rows, count]` for
 * them; other shapes are read defensively.
 */
export function affectedOf(result: unknown): number {
  if (isWrite(result)) return result[1];
  const r = result as { rowCount?: number; affected?: number } | null;
  return r?.rowCount ?? r?.affected ?? 0;
}

/** Rows an UPDATE/DELETE … RETURNING gave back (TypeORM's postgres driver wraps them as `[rows, count]`). */
export function returnedRows<T>(result: unknown): T[] {
  if (isWrite(result)) return result[0] as T[];
  return rowsOf<T>(result);
}
