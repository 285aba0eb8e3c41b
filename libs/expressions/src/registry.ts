import { FILTERS, TESTS } from './jinja/runtime';
import { MISTRAL_YAQL_FUNCTIONS, mistralFunctions } from './mistral-functions';
import { YAQL_PROPERTIES } from './yaql/runtime';

/**
 * yaql's registered functions that our compiler implements as syntax instead of table entries:
 * member access, indexing, the short-circuit operators, `->`, context lookups, result
 * finalization, and the datetime/timespan properties (`#property#name`, see dateProperty).
 * `*equal` / `*not_equal` are yaql's names for `=` / `!=` (our `#operator_=` / `#operator_!=`).
 */
export const YAQL_SYNTAX_FUNCTIONS: readonly string[] = [
  '#finalize',
  '#get_context_data',
  '#indexer',
  '#iter',
  '#operator_->',
  '#operator_.',
  '#operator_?.',
  '#operator_and',
  '#operator_or',
  '*equal',
  '*not_equal',
  ...YAQL_PROPERTIES.map((p) => `#property#${p}`),
];

/** Jinja globals besides Mistral's functions (which are globals and filters, DSL-8.4). */
export const JINJA_GLOBALS: readonly string[] = ['range', 'dict', 'cycler', 'joiner', 'lipsum', 'namespace'];

/** What this library provides, in the reference's vocabulary (checked against its registry). */
export function providedFunctions(): {
  yaql: string[];
  jinjaFilters: string[];
  jinjaTests: string[];
  jinjaGlobals: string[];
} {
  return {
    yaql: [...MISTRAL_YAQL_FUNCTIONS.keys(), ...YAQL_SYNTAX_FUNCTIONS],
    jinjaFilters: [...Object.keys(FILTERS), 'd', ...Object.keys(mistralFunctions)],
    jinjaTests: Object.keys(TESTS),
    jinjaGlobals: [...JINJA_GLOBALS, ...Object.keys(mistralFunctions)],
  };
}
