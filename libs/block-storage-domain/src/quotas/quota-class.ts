import { InvalidInputError } from '@osc/errors';
import { expectObject, parseInteger, requireEnvelope } from '../validation/primitives';
import { limitOf, type QuotaLimits } from './quota';

/**
 * `PUT /os-quota-class-sets/{class}` body: `{"quota_class_set": {key: int ≥ -1}}`, every key a
 * known quota resource (standard or per volume type). Unlike a project's quota set, usage is not
 * checked: a class only supplies defaults.
 */
export function parseQuotaClassUpdate(body: unknown, knownKeys: readonly string[]): Record<string, number> {
  const set = expectObject(requireEnvelope(body, 'quota_class_set'), 'quota_class_set');
  const bad = Object.keys(set).filter((k) => !knownKeys.includes(k));
  if (bad.length > 0)
    throw new InvalidInputError(`Bad key(s) in quota set: ${bad.map((k) => k.slice(0, 60)).join(', ')}`);
  const out: Record<string, number> = {};
  for (const [k, raw] of Object.entries(set)) out[k] = parseInteger(raw, k, -1, 2147483647);
  return out;
}

/** `{"quota_class_set": {id, <key>: limit}}`: the class's limits over the built-in defaults. */
export function quotaClassSetView(
  className: string,
  keys: readonly string[],
  limits: QuotaLimits,
  withId: boolean,
): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  for (const k of keys) set[k] = limitOf(limits, k);
  if (withId) set['id'] = className;
  return { quota_class_set: set };
}
