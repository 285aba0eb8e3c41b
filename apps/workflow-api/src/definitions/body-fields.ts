import { invalidField } from './query-values';

/** WSME's wording for a JSON body field of the wrong type: a string value as it came, others as JSON. */
export const wrongType = (field: string, v: unknown, reason: string) =>
  invalidField(field, typeof v === 'string' ? v : JSON.stringify(v), reason);

/** An optional string field of a JSON body; null counts as absent. */
export const optString = (body: Record<string, unknown>, field: string): string | undefined => {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string')
    throw wrongType(field, v, `Wrong type. Expected '<class 'str'>', got '<class '${typeof v}'>'`);
  return v;
};

/**
 * An optional object field that may also arrive as a JSON string (tempest sends strings;
 * workflow-api.md §3); an empty string is `{}`, null or absent is undefined.
 */
export const optMap = (field: string, v: unknown): Record<string, unknown> | undefined => {
  if (v === undefined || v === null) return undefined;
  let value = v;
  if (typeof v === 'string') {
    try {
      value = v.trim() === '' ? {} : JSON.parse(v);
    } catch {
      throw wrongType(field, v, 'Invalid JSON');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw wrongType(field, v, 'Value should be a dict');
  return value as Record<string, unknown>;
};
