import { InvalidInputError } from '@osc/errors';

/** A PostgreSQL server (distributed mode). */
export interface PostgresDatabaseOptions {
  readonly kind: 'postgres';
  /** `postgres://user:password@host:port/database[?options]` */
  readonly url: string;
  /** Connections in the pool (pg's `max`). Default 10. */
  readonly poolSize?: number;
}

/** The embedded engine (PGlite) persisted in a folder; `memory://` keeps it in memory only. */
export interface PgliteDatabaseOptions {
  readonly kind: 'pglite';
  readonly dataDir: string;
}

export type DatabaseOptions = PostgresDatabaseOptions | PgliteDatabaseOptions;

/** The configuration variables an app's `config.ts` passes on after validating them. */
export interface DatabaseEnv {
  readonly DATABASE_URL?: string | undefined;
  readonly DATA_DIR?: string | undefined;
  readonly DATABASE_POOL_SIZE?: string | number | undefined;
}

export const DEFAULT_DATA_DIR = './data';

/**
 * Chooses the engine: `DATABASE_URL` set → that PostgreSQL server; absent or empty → the embedded
 * engine in `DATA_DIR` (default `./data`). Messages name the variable, never its value (it may
 * hold a password).
 */
export function resolveDatabaseOptions(env: DatabaseEnv): DatabaseOptions {
  const url = env.DATABASE_URL?.trim();
  if (url) {
    const poolSize = parsePoolSize(env.DATABASE_POOL_SIZE);
    return { ...parseDatabaseUrl(url), ...(poolSize === undefined ? {} : { poolSize }) };
  }
  const dataDir = env.DATA_DIR?.trim();
  return { kind: 'pglite', dataDir: dataDir || DEFAULT_DATA_DIR };
}

/** Validates a `postgres://` or `postgresql://` URL; throws InvalidInputError naming DATABASE_URL. */
export function parseDatabaseUrl(url: string): PostgresDatabaseOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError(
      'DATABASE_URL is not a valid URL (expected postgres://user@host:port/database)',
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new InvalidInputError('DATABASE_URL must use the postgres:// or postgresql:// scheme');
  }
  if (!parsed.hostname) {
    throw new InvalidInputError('DATABASE_URL has no host');
  }
  if (parsed.pathname.length <= 1) {
    throw new InvalidInputError('DATABASE_URL has no database name');
  }
  return { kind: 'postgres', url };
}

function parsePoolSize(value: string | number | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = typeof value === 'number' ? value : Number(value.trim());
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new InvalidInputError('DATABASE_POOL_SIZE must be an integer between 1 and 1000');
  }
  return n;
}
