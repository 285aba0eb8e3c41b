import { ConflictError, InvalidInputError } from '@osc/errors';
import { DATA_EXCEPTION_MESSAGE } from '@osc/http-common';

/**
 * Database refusals that only bad input can cause become 400s (22xxx: a value the column cannot
 * hold, e.g. a NUL character or an over-long name) and 409s (23505: a unique index); anything else
 * propagates as is.
 */
export function translateDbError(err: unknown, conflictMessage: string): unknown {
  const code =
    (err as { code?: unknown; driverError?: { code?: unknown } } | null)?.code ??
    (err as { driverError?: { code?: unknown } } | null)?.driverError?.code;
  if (typeof code === 'string') {
    if (code === '23505') return new ConflictError(conflictMessage);
    if (code.startsWith('22')) return new InvalidInputError(DATA_EXCEPTION_MESSAGE);
  }
  return err;
}

const NUL = '\u0000';

/** PostgreSQL text and jsonb cannot hold NUL characters: refuse them up front with a clear message. */
export function rejectNul(what: string, ...values: readonly unknown[]): void {
  for (const v of values) {
    const s = typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v);
    if (s.includes(NUL) || s.includes('\\u0000'))
      throw new InvalidInputError(`${what} must not contain NUL characters.`);
  }
}

/**
 * Mistral's column widths (mistral/db/v2/sqlalchemy/models.py): definition names 255 characters,
 * cron and event trigger names 200. A longer value is refused before it reaches the database,
 * naming the field the way WSME's string type does.
 */
export const NAME_MAX = { definition: 255, trigger: 200 } as const;

export function checkLength(field: string, value: string | undefined, max: number): void {
  if (value !== undefined && value.length > max) {
    throw new InvalidInputError(
      `Invalid input for field/attribute ${field}. Value: '${value}'. Value should have a maximum character requirement of ${max}`,
    );
  }
}
