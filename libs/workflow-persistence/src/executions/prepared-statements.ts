/**
 * Hot statements prepared once per database session and run by `EXECUTE` with a generic plan.
 *
 * Some of the engine's statements took longer to plan than to run. Left to choose, PostgreSQL kept
 * planning them afresh for each call: their generic plans, costed without the arrays' sizes, look
 * dearer than a custom one. The lines of {@link GENERIC_PLANS} force the generic plan for the
 * `EXECUTE`s that follow them in a transaction, and turn sequential scans off: a generic plan is made
 * once and kept, and one made on a young database (a few rows, where a scan looks cheapest) went on
 * scanning as the table grew. Every row these statements read is found by an index.
 */
import { QueryFailedError } from 'typeorm';
import { isEmbeddedSession } from '@osc/persistence';

/**
 * A connection that runs several statements sent as one text in one round trip (PostgreSQL's simple
 * query protocol, values written into the text): `pg`'s client, which answers with one result per
 * statement.
 */
export interface StatementBatchRunner {
  query(text: string): Promise<unknown>;
  escapeLiteral(value: string): string;
}

/** A statement to prepare: its name and its text, with `$1`, `$2`… for its values. */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/** Set before the `EXECUTE`s of {@link PreparedStatement}s in a transaction (see the module's comment). */
export const GENERIC_PLANS = [
  'SET LOCAL plan_cache_mode = force_generic_plan',
  'SET LOCAL enable_seqscan = off',
] as const;

/** Gives the rest of the transaction back its usual planning. */
export const USUAL_PLANS = [
  'SET LOCAL plan_cache_mode TO DEFAULT',
  'SET LOCAL enable_seqscan TO DEFAULT',
] as const;

/**
 * {@link GENERIC_PLANS} for a statement built at run time ({@link executeBuilt}), and JIT compilation
 * off: such a statement calls functions (the history append) whose own statements are planned under
 * these settings the first time a session runs them, and a scan left in such a plan (a condition no
 * index serves) is costed out at 10^10, far above `jit_above_cost` — PostgreSQL JIT-compiled the
 * append's check for stream listeners at every run, 10–50 ms each.
 */
export const BUILT_PLANS = [...GENERIC_PLANS, 'SET LOCAL jit = off'] as const;
const BUILT_PLANS_RESET = [...USUAL_PLANS, 'SET LOCAL jit TO DEFAULT'] as const;

/** Sessions (client objects) on which each statement name is prepared. */
const preparedOn = new WeakMap<object, Map<string, Promise<void>>>();

/**
 * Prepares the statements on the connection unless they are already. A prepared statement lives as
 * long as the database session, whatever transaction it was prepared in; the embedded database's
 * session may outlive the client object, hence the look at `pg_prepared_statements` once per client.
 */
export async function prepareStatements(
  client: StatementBatchRunner,
  statements: readonly PreparedStatement[],
): Promise<void> {
  let known = preparedOn.get(client);
  if (!known) {
    known = new Map();
    preparedOn.set(client, known);
  }
  const missing = statements.filter((s) => !known.has(s.name));
  if (missing.length > 0) {
    const done = (async () => {
      const present = (await client.query(
        `SELECT "name" FROM pg_prepared_statements WHERE "name" IN (${missing
          .map((s) => client.escapeLiteral(s.name))
          .join(', ')})`,
      )) as { rows: { name: string }[] };
      const have = new Set(present.rows.map((r) => r.name));
      const texts = missing.filter((s) => !have.has(s.name)).map((s) => `PREPARE ${s.name} AS ${s.text}`);
      if (texts.length > 0) await client.query(texts.join(';\n'));
    })();
    for (const s of missing) known.set(s.name, done);
    done.catch(() => {
      for (const s of missing) if (known.get(s.name) === done) known.delete(s.name);
    });
  }
  await Promise.all(statements.map((s) => known.get(s.name)));
}

/** Thrown for a value {@link sqlLiteral} cannot write (none of the kinds bound by the engine). */
export class UnwritableValueError extends Error {}

/** The tag of the dollar-quoted literals {@link quoted} writes. */
const TAG = '$osc$';

/**
 * Text as an SQL literal: dollar-quoted (nothing inside is escaped, so a long JSON text is not
 * copied character by character), or, when the text holds the tag's start, between single quotes
 * with its quotes doubled, and its backslashes when there are any (an `E''` literal).
 */
const quoted = (text: string): string => {
  if (!text.includes('$osc')) return `${TAG}${text}${TAG}`;
  return text.includes('\\')
    ? `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`
    : `'${text.replace(/'/g, "''")}'`;
};

/** An array element in an array literal's text: NULL, or its text between double quotes. */
const element = (value: unknown): string => {
  if (value === null || value === undefined) return 'NULL';
  const text = textOf(value);
  return text.includes('"') || text.includes('\\') ? `"${text.replace(/[\\"]/g, '\\$&')}"` : `"${text}"`;
};

/**
 * A scalar's text as PostgreSQL reads it (what `pg` sends for a bound value): strings as they are,
 * numbers, booleans, dates in ISO form, other objects as JSON.
 */
const textOf = (value: unknown): string => {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'object':
      if (value instanceof Date) return value.toISOString();
      if (value !== null && !Array.isArray(value) && !Buffer.isBuffer(value)) return JSON.stringify(value);
      break;
    case 'function':
    case 'symbol':
    case 'undefined':
      break;
  }
  throw new UnwritableValueError(`no SQL literal for a value of type ${typeof value}`);
};

/**
 * A value written as an SQL literal for `EXECUTE`, of the type the statement's parameter declares:
 * NULL, a scalar's text, or a one-dimensional array as one array literal (`'{"a",NULL}'`, not
 * ARRAY[…] of one constant per element). Throws {@link UnwritableValueError} for anything else.
 */
export const sqlLiteral = (value: unknown): string => {
  if (value === null || value === undefined) return 'NULL';
  if (!Array.isArray(value)) return quoted(textOf(value));
  return quoted(`{${value.map(element).join(',')}}`);
};

/** `EXECUTE name(values…)` with the values written as literals. */
export const executeStatement = (name: string, values: readonly unknown[]): string =>
  values.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${values.map(sqlLiteral).join(', ')})`;

/**
 * Names for statement texts, `<prefix><n>`, one per text; at most `max` texts per process, so that
 * what each database session holds stays bounded: undefined for a text beyond (it runs as before).
 */
const statementNames = (prefix: string, max: number): ((text: string) => string | undefined) => {
  const names = new Map<string, string>();
  return (text) => {
    let name = names.get(text);
    if (!name && names.size < max) {
      name = `${prefix}${names.size + 1}`;
      names.set(text, name);
    }
    return name;
  };
};

/**
 * Statements whose text is built at run time (a group's rows statement: its parts depend on the
 * kinds of rows written), each prepared under a name of its own, at most 64 texts per process.
 */
const builtName = statementNames('osc_built_', 64);

/** The prepared statement of a text built at run time, or undefined when the process holds its maximum. */
const builtStatement = (text: string): PreparedStatement | undefined => {
  const name = builtName(text);
  return name ? { name, text } : undefined;
};

/**
 * Above this many characters of values (a long batch of with-items results), a statement is sent
 * with bound values as before: its planning costs the same whatever their size, while as literals
 * they are copied into its text and parsed again, and the plan saved becomes a small share. Measured
 * (a jsonb value, `EXECUTE` with a literal against a bound parameter, one connection): the literal
 * costs ~0.14 ms more at 16 K characters, ~0.3 ms at 64 K, ~1.8 ms at 256 K, while a group's rows
 * statement sent with bound values is planned anew at every call, 1.5–2 ms. At 16 K, 77 of 1,721 rows
 * statements of a seq10 run with inline actions off (the groups of ten executions and more, 45 % of
 * the values' bytes) were planned at each call; at 128 K, none.
 */
const MAX_LITERAL_LENGTH = 128 * 1024;

/** The characters of the values' texts (strings, and strings in arrays), stopping past the maximum. */
const literalLength = (values: readonly unknown[]): number => {
  let n = 0;
  for (const v of values) {
    if (typeof v === 'string') n += v.length;
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') n += x.length;
    if (n > MAX_LITERAL_LENGTH) break;
  }
  return n;
};

/**
 * Runs a statement built at run time (`$1`, `$2`… typed by casts, its results not needed) by
 * `EXECUTE` with a generic plan ({@link BUILT_PLANS}), in the transaction open on `client`; false,
 * having sent nothing, when it does not: the process holds 64 built texts
 * already, the values are long or one has no literal, or the session is the embedded engine's — the
 * caller then sends the statement as usual. (In PGlite the settings' statements around the `EXECUTE`
 * cost more than the planning saved: with-items of 10,000 items took 5.5–6.0 s against 5.0–5.4.)
 */
export async function executeBuilt(
  client: StatementBatchRunner,
  text: string,
  values: readonly unknown[],
): Promise<boolean> {
  if (isEmbeddedSession(client) || literalLength(values) > MAX_LITERAL_LENGTH) return false;
  const statement = builtStatement(text);
  if (!statement) return false;
  let execute: string;
  try {
    execute = executeStatement(statement.name, values);
  } catch (e) {
    if (e instanceof UnwritableValueError) return false;
    throw e;
  }
  try {
    await prepareStatements(client, [statement]);
    await client.query([...BUILT_PLANS, execute, ...BUILT_PLANS_RESET].join(';\n'));
  } catch (e) {
    // as the statement sent through TypeORM fails: callers and logs see the same error either way
    throw new QueryFailedError(text, [...values], e as Error);
  }
  return true;
}

/**
 * The connection of the transaction `db` runs in (a TypeORM EntityManager of a query runner holding
 * one), when it can run statement batches; undefined otherwise.
 */
export const transactionBatchRunner = (db: unknown): StatementBatchRunner | undefined => {
  const qr = (db as { queryRunner?: { isTransactionActive?: boolean; databaseConnection?: unknown } } | null)
    ?.queryRunner;
  const client = qr?.isTransactionActive
    ? (qr.databaseConnection as Partial<StatementBatchRunner>)
    : undefined;
  return typeof client?.query === 'function' && typeof client.escapeLiteral === 'function'
    ? (client as StatementBatchRunner)
    : undefined;
};

/** A `pg` client as {@link queryNamed} uses it: a query given as a config object with a name. */
interface NamedQueryClient {
  query(config: {
    name: string;
    text: string;
    values: unknown[];
  }): Promise<{ rows: Record<string, unknown>[] }>;
}

/** A query runner as {@link queryNamed} checks one out of the pool. */
interface PooledRunner {
  connect(): Promise<unknown>;
  release(): Promise<void>;
}

/** Statements run as named prepared statements ({@link queryNamed}), at most 64 texts per process. */
const namedStatement = statementNames('osc_named_', 64);

/** Data sources found to be the embedded engine's: {@link queryNamed} sends as before without a look. */
const embeddedSources = new WeakSet<object>();

/**
 * Runs one statement with bound values as a named prepared statement of the connection, and returns
 * its rows: `pg` parses it once per database session, and PostgreSQL, after a few runs, keeps a
 * generic plan when it costs no more than fresh ones. For the API's statements that run on every
 * request (the workflow lookup and the insert of `POST /v2/executions`): planning them afresh cost
 * PostgreSQL 0.13–0.25 ms each, as much as running them. In a transaction it runs on the
 * transaction's connection, otherwise on one of the pool's. The embedded engine's session outlives
 * its client objects, which therefore cannot tell which names it holds: there, and past
 * 64 texts, the statement is sent as before (`db.query`). Errors are
 * TypeORM's `QueryFailedError`, as `db.query` throws them.
 */
export async function queryNamed(
  db: { query(sql: string, parameters?: unknown[]): Promise<unknown> },
  text: string,
  values: unknown[],
): Promise<Record<string, unknown>[]> {
  const asBefore = async () => (await db.query(text, values)) as Record<string, unknown>[];
  const name = namedStatement(text);
  // a QueryRunner (it has `isReleased`) is its own connection: as before
  if (!name || 'isReleased' in db) return asBefore();
  const send = async (client: unknown): Promise<Record<string, unknown>[] | undefined> => {
    if (isEmbeddedSession(client as object)) return undefined;
    try {
      return (await (client as NamedQueryClient).query({ name, text, values })).rows;
    } catch (e) {
      throw new QueryFailedError(text, [...values], e as Error);
    }
  };
  // an EntityManager of a query runner: the runner's connection, in its transaction
  const own = (db as { queryRunner?: { isTransactionActive?: boolean } }).queryRunner;
  if (own) {
    const client = own.isTransactionActive ? transactionBatchRunner(db) : undefined;
    return (client && (await send(client))) ?? asBefore();
  }
  // a DataSource, or the EntityManager of none: a connection of the pool
  const source = ((db as { connection?: unknown }).connection ?? db) as object;
  const create = (source as { createQueryRunner?: () => PooledRunner }).createQueryRunner;
  if (typeof create !== 'function' || embeddedSources.has(source)) return asBefore();
  const qr = create.call(source);
  let rows: Record<string, unknown>[] | undefined;
  try {
    rows = await send(await qr.connect());
  } finally {
    await qr.release();
  }
  if (rows) return rows;
  embeddedSources.add(source);
  return asBefore();
}
