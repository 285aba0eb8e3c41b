import { InvalidInputError } from '@osc/errors';
import { invalidInput, isJsonObject, type JsonObject } from '../validation/primitives';
import { resourceLinks, type Link, type LinkContext } from '../views/links';

/**
 * QoS specs (BS-7.13, `/qos-specs`, admin): a named set of key/value limits with a consumer (where
 * they are enforced). Volume types point at one QoS spec through `qos_specs_id`; a type has at
 * most one, a spec may serve many types.
 */
export const QOS_CONSUMERS = ['front-end', 'back-end', 'both'] as const;
export type QosConsumer = (typeof QOS_CONSUMERS)[number];
export const DEFAULT_QOS_CONSUMER: QosConsumer = 'back-end';

export interface QosSpecsValue {
  readonly id: string;
  readonly name: string;
  readonly consumer: QosConsumer;
  readonly specs: Readonly<Record<string, string | null>>;
}

export interface QosAssociation {
  readonly id: string;
  readonly name: string;
}

export interface QosCreateInput {
  readonly name: string;
  readonly consumer: QosConsumer;
  readonly specs: Record<string, string | null>;
}

export interface QosUpdateInput {
  readonly consumer?: QosConsumer;
  readonly specs: Record<string, string | null>;
}

/** Cinder's `assert_valid_body`: the envelope must be present and an object. */
function envelope(body: unknown, key: string): JsonObject {
  const inner = isJsonObject(body) ? body[key] : undefined;
  if (!isJsonObject(inner)) throw new InvalidInputError(`Missing required element '${key}' in request body.`);
  return inner;
}

/** Cinder's string-length check (`<name> has N characters, less than 1.`), as `Invalid input received: ...`. */
function checkLength(value: unknown, name: string, min: number, max: number): string {
  if (typeof value !== 'string') throw invalidInput(`${name} is not a string or unicode`);
  if (value.length < min) throw invalidInput(`${name} has ${value.length} characters, less than ${min}.`);
  if (value.length > max) throw invalidInput(`${name} has ${value.length} characters, more than ${max}.`);
  return value;
}

/** Spec keys 1–255 characters, values strings of at most 255 characters or null. */
function parseSpecItems(obj: JsonObject): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(obj)) {
    checkLength(k, `Key "${k.slice(0, 120)}"`, 1, 255);
    out[k] = v === null ? null : checkLength(v, `Value for key "${k.slice(0, 120)}"`, 0, 255);
  }
  return out;
}

function parseConsumer(value: unknown): QosConsumer {
  if (typeof value === 'string' && (QOS_CONSUMERS as readonly string[]).includes(value)) return value as QosConsumer;
  throw new InvalidInputError(`Invalid qos specs: Valid consumer of QoS specs are: ${QOS_CONSUMERS.join(', ')}`);
}

/** `POST /qos-specs` body: `{"qos_specs": {"name": ..., "consumer"?: ..., <key>: <value>...}}`. */
export function parseCreateQosSpecs(body: unknown): QosCreateInput {
  const obj = { ...envelope(body, 'qos_specs') };
  const rawName = obj['name'];
  delete obj['name'];
  if (rawName === undefined || rawName === null) throw new InvalidInputError('Please specify a name for QoS specs.');
  const name = checkLength(typeof rawName === 'string' ? rawName.trim() : rawName, 'name', 1, 255);
  const specs = parseSpecItems(obj);
  let consumer = DEFAULT_QOS_CONSUMER;
  if ('consumer' in specs) {
    consumer = parseConsumer(specs['consumer']);
    delete specs['consumer'];
  }
  return { name, consumer, specs };
}

/** `PUT /qos-specs/{id}` body: keys to set (`consumer` changes the consumer). */
export function parseUpdateQosSpecs(body: unknown): QosUpdateInput {
  const specs = parseSpecItems(envelope(body, 'qos_specs'));
  if (!('consumer' in specs)) return { specs };
  const consumer = parseConsumer(specs['consumer']);
  delete specs['consumer'];
  return { consumer, specs };
}

/** `PUT /qos-specs/{id}/delete_keys` body: `{"keys": [<key>...]}`. */
export function parseQosDeleteKeys(body: unknown): string[] {
  const keys = isJsonObject(body) ? body['keys'] : undefined;
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== 'string')) {
    throw new InvalidInputError(
      'The server could not comply with the request since it is either malformed or otherwise incapable of performing it.',
    );
  }
  return [...new Set(keys as string[])];
}

/** `?vol_type_id=` of associate / disassociate: required and non-empty. */
export function parseQosVolumeTypeId(value: string | undefined): string {
  if (value === undefined || value === '') throw new InvalidInputError('Volume Type id must not be None.');
  return value;
}

/** `?force=` of delete, read like oslo's non-strict `bool_from_string` (anything else is false). */
export const qosForceFlag = (value: string | undefined): boolean =>
  value !== undefined && ['1', 't', 'true', 'on', 'y', 'yes'].includes(value.trim().toLowerCase());

export function qosSpecsItemView(q: QosSpecsValue): Record<string, unknown> {
  return { id: q.id, name: q.name, consumer: q.consumer, specs: { ...q.specs } };
}

export function qosSpecsView(q: QosSpecsValue, links: LinkContext): { qos_specs: Record<string, unknown>; links: Link[] } {
  return { qos_specs: qosSpecsItemView(q), links: resourceLinks(links, 'qos-specs', q.id) };
}

export function qosAssociationsView(types: readonly QosAssociation[]): { qos_associations: Record<string, unknown>[] } {
  return { qos_associations: types.map((t) => ({ association_type: 'volume_type', name: t.name, id: t.id })) };
}
