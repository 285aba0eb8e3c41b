/**
 * Rows bound as a statement's values, as a `FROM` item: a few as a `VALUES` list, more as one array
 * per column (`unnest`), so that the statement's text — and so its parsing, its planning, and the
 * number of distinct texts a session prepares — does not grow with the number of rows. A `VALUES`
 * list of a 32-execution group's rows cost PostgreSQL ~2.5 ms to plan, most of it copying and walking
 * the list's ~1,000 parameters; one row costs less as `VALUES` (~0.5 ms of backend CPU less per
 * five-part statement). Both yield the rows in order.
 */

/** A column of the rows: its name in `v`, its PostgreSQL type and its value in a row. */
export type RowColumn<R> = readonly [name: string, type: string, value: (row: R) => unknown];

/** Above this many rows, rows bind as one array per column. */
export const ROWS_AS_VALUES = 3;

/** The names of the columns in `v`. */
const namesOf = <R>(columns: readonly RowColumn<R>[]): string => columns.map(([name]) => name).join(', ');

/** `VALUES (…), …`: each value of each row bound on its own (`bind` returns its placeholder). */
export const valuesOf = <R>(
  rows: readonly R[],
  columns: readonly RowColumn<R>[],
  bind: (value: unknown) => string,
): string =>
  `VALUES ${rows.map((row) => `(${columns.map(([, type, value]) => `${bind(value(row))}::${type}`).join(', ')})`).join(', ')}`;

/** `unnest(…) AS v(…)`: one array bound per column. */
export const unnestOf = <R>(
  rows: readonly R[],
  columns: readonly RowColumn<R>[],
  bind: (value: unknown) => string,
): string =>
  `unnest(${columns.map(([, type, value]) => `${bind(rows.map(value))}::${type}[]`).join(', ')}) AS v(${namesOf(columns)})`;

/** `… AS v(…)`: the rows as a `FROM` item, a `VALUES` list up to {@link ROWS_AS_VALUES} rows, `unnest` beyond. */
export const rowSource = <R>(
  rows: readonly R[],
  columns: readonly RowColumn<R>[],
  bind: (value: unknown) => string,
): string =>
  rows.length <= ROWS_AS_VALUES
    ? `(${valuesOf(rows, columns, bind)}) AS v(${namesOf(columns)})`
    : unnestOf(rows, columns, bind);
