import { InvalidInputError } from '@osc/errors';
import type { DefinitionTable } from '@osc/workflow-persistence';
import { type QueryBag, queryValue } from './query-values';

/** `fields` of a single GET: known fields only, `id` always first. Empty means all fields. */
export function parseSingleFields(table: DefinitionTable, query: QueryBag): string[] {
  const raw = queryValue(query, 'fields');
  if (raw === undefined) return [];
  const fields: string[] = [];
  for (const item of raw.split(',')) {
    const f = item.trim().toLowerCase();
    if (f && !fields.includes(f)) fields.push(f);
  }
  if (fields.length === 0) return [];
  const unknown = fields.filter((f) => !table.columns[f]);
  if (unknown.length > 0) {
    throw new InvalidInputError(
      `Some fields do not exist  [${unknown.join(', ')}], please choose from [${table.fields.join(', ')}]`,
    );
  }
  if (!fields.includes('id')) fields.unshift('id');
  return fields;
}
