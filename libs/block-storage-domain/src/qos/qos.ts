import { InvalidInputError } from '@osc/errors';
import {
  echoValue,
  fieldError,
  invalidInput,
  isJsonObject,
  rejectUnknownKeys,
  requireEnvelope,
  requireKey,
  type JsonObject,
} from '../validation/primitives';
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

const NAME_ERROR = "An invalid 'name' value was provided.";
const SPEC_KEY = /^[A-Za-z0-9_:. /-]{1,255}$/;
// Cinder answers an unknown consumer with its enum field's repr.
const CONSUMER_ERROR =
  "Invalid qos specs: Valid consumer of QoS specs are: QoSConsumerValues(default=<class 'oslo_versionedobjects.fields.UnspecifiedDefault'>,nullable=False,valid_values=('back-end', 'front-end', 'both'))";

const typeName = (value: unknown): string => (typeof value === 'string' ? `'${value}'` : echoValue(value));

/** The body holds exactly `key`, an object. */
function envelope(body: unknown, key: string): JsonObject {
  const inner = requireEnvelope(body, key);
  rejectUnknownKeys(body as JsonObject, [key], null);
  return inner;
}

/** Cinder's length check of free-form spec items (`Key "k" has 0 characters, less than 1.`). */
function checkLength(value: unknown, name: string, min: number, max: number): string {
  if (typeof value !== 'string') throw invalidInput(`${name} is not a string or unicode`);
  if (value.length < min) throw invalidInput(`${name} has ${value.length} characters, less than ${min}.`);
  if (value.length > max) throw invalidInput(`${name} has ${value.length} characters, more than ${max}.`);
  return value;
}

function parseConsumer(value: string): QosConsumer {
  if ((QOS_CONSUMERS as readonly string[]).includes(value)) return value as QosConsumer;
  throw new InvalidInputError(CONSUMER_ERROR);
}

/**
 * `POST /qos-specs` body: `{"qos_specs": {"name": ..., "consumer"?: ..., <key>: <value>...}}`. The
 * name is trimmed; other keys are free-form strings (null values are not stored); the consumer
 * defaults to back-end.
 */
export function parseCreateQosSpecs(body: unknown): QosCreateInput {
  const obj = envelope(body, 'qos_specs');
  const rawName = requireKey(obj, 'name', 'qos_specs');
  if (typeof rawName !== 'string')
    throw fieldError('name', rawName, `${typeName(rawName)} is not of type 'string'`);
  const name = rawName.trim();
  if (name.length === 0) throw new InvalidInputError(`${NAME_ERROR} The 'name' can not be empty.`);
  if (name.length > 255)
    throw new InvalidInputError(`${NAME_ERROR} The 'name' can not be greater than 255 characters.`);
  const specs: Record<string, string | null> = {};
  let consumer = DEFAULT_QOS_CONSUMER;
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'name') continue;
    checkLength(k, `Key "${k.slice(0, 255)}"`, 1, 255);
    if (v === null) continue;
    const value = checkLength(v, `Value for key "${k.slice(0, 255)}"`, 0, 255);
    if (k === 'consumer') consumer = parseConsumer(value);
    else specs[k] = value;
  }
  return { name, consumer, specs };
}

/** `PUT /qos-specs/{id}` body: keys to set (values string or null); `consumer` changes the consumer (null: unchanged). */
export function parseUpdateQosSpecs(body: unknown): QosUpdateInput & { echo: Record<string, string | null> } {
  const obj = envelope(body, 'qos_specs');
  const echo: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (!SPEC_KEY.test(k))
      throw fieldError(
        'qos_specs',
        obj,
        `'${echoValue(k)}' does not match any of the regexes: '^[a-zA-Z0-9-_:. /]{1,255}$'`,
      );
    if (v !== null && typeof v !== 'string')
      throw fieldError(k, v, `${typeName(v)} is not of type 'string', 'null'`);
    if (typeof v === 'string' && v.length > 255) throw fieldError(k, v, `${typeName(v)} is too long`);
    echo[k] = v;
  }
  const { consumer, ...specs } = echo;
  return { ...(typeof consumer === 'string' ? { consumer: parseConsumer(consumer) } : {}), specs, echo };
}

/** `PUT /qos-specs/{id}/delete_keys` body: `{"keys": [<key>...]}`, distinct strings. */
export function parseQosDeleteKeys(body: unknown): string[] {
  if (!isJsonObject(body) || !('keys' in body)) throw new InvalidInputError("'keys' is a required property");
  const keys = body['keys'];
  if (!Array.isArray(keys)) throw fieldError('keys', keys, `${typeName(keys)} is not of type 'array'`);
  keys.forEach((k: unknown, i) => {
    if (typeof k !== 'string') throw fieldError(String(i), k, `${typeName(k)} is not of type 'string'`);
  });
  const list = keys as string[];
  if (new Set(list).size !== list.length) {
    const repr = `[${list.map((k) => `'${k}'`).join(', ')}]`;
    throw fieldError('keys', repr, `${repr} has non-unique elements`);
  }
  return list;
}

/** `?vol_type_id=` of associate / disassociate: required and non-empty. */
export function parseQosVolumeTypeId(value: string | undefined): string {
  if (value === undefined || value === '') throw new InvalidInputError('Volume Type id must not be None.');
  return value;
}

const TRUE = ['1', 't', 'true', 'on', 'y', 'yes'];
const FALSE = ['0', 'f', 'false', 'off', 'n', 'no'];

/** `?force=` of delete: absent is false; otherwise a boolean spelling, else 400. */
export function qosForceFlag(value: string | undefined): boolean {
  if (value === undefined) return false;
  const v = value.trim().toLowerCase();
  if (TRUE.includes(v)) return true;
  if (FALSE.includes(v)) return false;
  throw new InvalidInputError(`Value '${value}' for 'force' is not a boolean.`);
}

export function qosSpecsItemView(q: QosSpecsValue): Record<string, unknown> {
  return { id: q.id, name: q.name, consumer: q.consumer, specs: { ...q.specs } };
}

export function qosSpecsView(
  q: QosSpecsValue,
  links: LinkContext,
): { qos_specs: Record<string, unknown>; links: Link[] } {
  return { qos_specs: qosSpecsItemView(q), links: resourceLinks(links, 'qos-specs', q.id) };
}

export function qosAssociationsView(types: readonly QosAssociation[]): {
  qos_associations: Record<string, unknown>[];
} {
  return {
    qos_associations: types.map((t) => ({ association_type: 'volume_type', name: t.name, id: t.id })),
  };
}
