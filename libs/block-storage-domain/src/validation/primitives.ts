import { InvalidInputError } from '@osc/errors';

/**
 * Validation primitives shared by every request body (spec section 6). Each function takes the raw
 * JSON value and the field name, returns a typed value, or throws InvalidInputError whose message
 * starts with `Invalid input for field/attribute <field>. Value: <value>.` (BS-3.4).
 */

export type JsonObject = Record<string, unknown>;

const MAX_ECHO = 120;

/** Renders a rejected value for an error message: short, and never an object graph dump. */
export function echoValue(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value === undefined) text = 'None';
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}...` : text;
}

/** `Invalid input for field/attribute <field>. Value: <value>. <reason>` as an InvalidInputError. */
export const fieldError = (field: string, value: unknown, reason: string): InvalidInputError =>
  new InvalidInputError(`Invalid input for field/attribute ${field}. Value: ${echoValue(value)}. ${reason}`);

/** `Invalid input received: <reason>` for domain refusals that are not schema failures. */
export const invalidInput = (reason: string): InvalidInputError =>
  new InvalidInputError(`Invalid input received: ${reason}`);

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const typeName = (value: unknown): string => (typeof value === 'string' ? `'${value}'` : echoValue(value));

/** The value must be a JSON object. */
export function expectObject(value: unknown, field: string): JsonObject {
  if (!isJsonObject(value)) throw fieldError(field, value, `${typeName(value)} is not of type 'object'`);
  return value;
}

/**
 * The request body must be an object holding `key` (BS-1.5: a missing body reads as an empty one).
 * Returns the inner object.
 */
export function requireEnvelope(body: unknown, key: string): JsonObject {
  if (body === undefined || body === null || body === '') {
    throw new InvalidInputError(`Missing required element '${key}' in request body.`);
  }
  if (!isJsonObject(body)) throw new InvalidInputError(`${typeName(body)} is not of type 'object'`);
  if (!(key in body)) throw new InvalidInputError(`'${key}' is a required property`);
  return expectObject(body[key], key);
}

/** Strict objects (BS-6.6): any key outside `allowed` → 400 naming it. */
export function rejectUnknownKeys(obj: JsonObject, allowed: readonly string[], field: string | null): void {
  const extra = Object.keys(obj).filter((k) => !allowed.includes(k));
  if (extra.length === 0) return;
  const reason = `Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`;
  throw field === null ? new InvalidInputError(reason) : fieldError(field, obj, reason);
}

export function requireKey(obj: JsonObject, key: string, field: string): unknown {
  if (!(key in obj)) throw fieldError(field, obj, `'${key}' is a required property`);
  return obj[key];
}

export const has = (obj: JsonObject, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(obj, key) && obj[key] !== undefined;

const MAX_NAME = 255;

/**
 * A name-like string (BS-6.1): surrounding whitespace is trimmed; `required` names must be
 * non-empty after trimming; at most 255 characters. `null` is allowed only when `nullable`.
 */
export function parseName(
  value: unknown,
  field: string,
  options: { required?: boolean; nullable?: boolean } = {},
): string | null {
  if (value === null && options.nullable && !options.required) return null;
  if (typeof value !== 'string') throw fieldError(field, value, `${typeName(value)} is not of type 'string'`);
  const trimmed = value.trim();
  if (options.required && trimmed.length === 0)
    throw fieldError(field, value, 'Name has a null string or only whitespace.');
  if (trimmed.length > MAX_NAME)
    throw fieldError(field, value, `'${echoValue(value)}' is too long (at most ${MAX_NAME} characters)`);
  return trimmed;
}

// Printable: no C0 control characters except tab/newline/carriage return, no DEL.
// eslint-disable-next-line no-control-regex
const NON_PRINTABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** A description (BS-6.1): null or 0–255 printable characters. */
export function parseDescription(value: unknown, field = 'description'): string | null {
  if (value === null) return null;
  if (typeof value !== 'string')
    throw fieldError(field, value, `${typeName(value)} is not of type 'string', 'null'`);
  if (value.length > MAX_NAME)
    throw fieldError(field, value, `'${echoValue(value)}' is too long (at most ${MAX_NAME} characters)`);
  if (NON_PRINTABLE.test(value))
    throw fieldError(field, value, 'Description contains non-printable characters.');
  return value;
}

const TRUE_STRINGS = ['True', 'true', 'TRUE', '1', 'ON', 'On', 'on', 'YES', 'Yes', 'yes', 'y', 't'];
const FALSE_STRINGS = ['False', 'false', 'FALSE', '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no', 'n', 'f'];

/** A boolean in a body (BS-6.2): JSON booleans and the listed spellings; anything else → 400. */
export function parseBoolean(value: unknown, field: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    if (TRUE_STRINGS.includes(value)) return true;
    if (FALSE_STRINGS.includes(value)) return false;
  }
  throw fieldError(field, value, `${typeName(value)} is not a valid boolean value`);
}

export const MAX_SIZE = 2147483647;

/** A size in GiB (BS-6.3): JSON integer or decimal-digit string, 1 ≤ n ≤ 2147483647. */
export function parseSize(value: unknown, field = 'size', minimum = 1): number {
  let n: number | undefined;
  if (typeof value === 'number' && Number.isInteger(value)) n = value;
  else if (typeof value === 'string' && /^[0-9]{1,12}$/.test(value.trim())) n = Number(value.trim());
  if (n === undefined)
    throw fieldError(field, value, `${typeName(value)} is not of type 'integer', 'string' (decimal digits)`);
  if (n < minimum) throw fieldError(field, value, `${n} is less than the minimum of ${minimum}`);
  if (n > MAX_SIZE) throw fieldError(field, value, `${n} is greater than the maximum of ${MAX_SIZE}`);
  return n;
}

/** An integer (or decimal-digit string) in `[min, max]`. */
export function parseInteger(
  value: unknown,
  field: string,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER,
): number {
  let n: number | undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value)) n = value;
  else if (typeof value === 'string' && /^-?[0-9]{1,15}$/.test(value.trim())) n = Number(value.trim());
  if (n === undefined) throw fieldError(field, value, `${typeName(value)} is not of type 'integer'`);
  if (n < min) throw fieldError(field, value, `${n} is less than the minimum of ${min}`);
  if (n > max) throw fieldError(field, value, `${n} is greater than the maximum of ${max}`);
  return n;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** A canonical UUID (BS-6.4), lower-cased. */
export function parseUuid(value: unknown, field: string): string {
  if (!isUuid(value)) throw fieldError(field, value, `${typeName(value)} is not a 'uuid'`);
  return value.toLowerCase();
}

/** A canonical UUID or null. */
export function parseNullableUuid(value: unknown, field: string): string | null {
  return value === null ? null : parseUuid(value, field);
}

const METADATA_KEY = /^[A-Za-z0-9_:. /-]{1,255}$/;

/**
 * A metadata object (BS-6.5): keys 1–255 characters of `[A-Za-z0-9-_:. /]`, string values of at
 * most 255 characters.
 */
export function parseMetadata(value: unknown, field = 'metadata'): Record<string, string> {
  const obj = expectObject(value, field);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (!METADATA_KEY.test(k))
      throw fieldError(
        field,
        obj,
        `'${echoValue(k)}' does not match any of the regexes: '^[a-zA-Z0-9-_:. /]{1,255}$'`,
      );
    if (typeof v !== 'string') throw fieldError(field, obj, `${typeName(v)} is not of type 'string'`);
    if (v.length > MAX_NAME)
      throw fieldError(field, obj, `'${echoValue(v)}' is too long (at most ${MAX_NAME} characters)`);
    out[k] = v;
  }
  return out;
}

/** A string of 1..max characters. */
export function parseString(
  value: unknown,
  field: string,
  options: { min?: number; max?: number; nullable?: boolean } = {},
): string | null {
  if (value === null && options.nullable) return null;
  if (typeof value !== 'string') throw fieldError(field, value, `${typeName(value)} is not of type 'string'`);
  const min = options.min ?? 0;
  const max = options.max ?? MAX_NAME;
  if (value.length < min) throw fieldError(field, value, `'${value}' is too short`);
  if (value.length > max)
    throw fieldError(field, value, `'${echoValue(value)}' is too long (at most ${max} characters)`);
  return value;
}

/** A required name: non-empty after trimming, at most 255 characters. */
export function parseRequiredName(value: unknown, field: string): string {
  return parseName(value, field, { required: true }) ?? '';
}

/** A required string of `min..max` characters. */
export function parseRequiredString(
  value: unknown,
  field: string,
  options: { min?: number; max?: number } = {},
): string {
  return parseString(value, field, { ...options, nullable: false }) ?? '';
}
