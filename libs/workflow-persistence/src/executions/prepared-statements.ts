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

/** A value of an `EXECUTE`: text, an array of texts, or NULL. */
export type StatementValue = string | readonly string[] | null;

/**
 * A value written as an SQL literal for `EXECUTE`: NULL, the escaped text, or an array as one array
 * literal (`'{"a","b"}'`, not ARRAY[…] of one constant per element).
 */
export const sqlLiteral = (client: StatementBatchRunner, value: StatementValue): string =>
  value === null
    ? 'NULL'
    : client.escapeLiteral(
        typeof value === 'string'
          ? value
          : `{${value.map((x) => `"${x.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`,
      );

/** `EXECUTE name(values…)` with the values written as literals. */
export const executeStatement = (
  client: StatementBatchRunner,
  name: string,
  values: readonly StatementValue[],
): string =>
  values.length === 0
    ? `EXECUTE ${name}`
    : `EXECUTE ${name}(${values.map((v) => sqlLiteral(client, v)).join(', ')})`;
