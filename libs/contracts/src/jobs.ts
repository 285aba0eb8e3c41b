/**
 * Typed jobs. A queue's jobs are described by a map from job name to data type
 * (`BackendJobPayloads`, `BackupJobPayloads`); producers build `JobOf<Map>` values so the data
 * matches the name, and workers dispatch on the name to one handler per name.
 */

/** One job of a name → data map as a discriminated union on `name`. */
export type JobOf<M> = { [K in keyof M & string]: { readonly name: K; readonly data: M[K] } }[keyof M &
  string];

/**
 * Compile-time check that a name list covers every name of a map: `ListsEvery<keyof M, typeof
 * NAMES>` is `true`, or the program does not type-check.
 */
export type ListsEvery<All extends string, Listed extends readonly string[]> = [
  Exclude<All, Listed[number]>,
] extends [never]
  ? true
  : never;
