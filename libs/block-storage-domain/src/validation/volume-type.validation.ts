import { InvalidInputError } from '@osc/errors';
import {
  expectObject,
  fieldError,
  has,
  parseBoolean,
  parseDescription,
  parseInteger,
  parseRequiredName,
  parseRequiredString,
  parseString,
  rejectUnknownKeys,
  requireEnvelope,
  requireKey,
  type JsonObject,
} from './primitives';

/** Extra-spec values are strings; `null` clears nothing but is stored as given (upstream accepts it). */
export type ExtraSpecs = Record<string, string | null>;

const SPEC_KEY = /^[A-Za-z0-9_:.-]{1,255}$/;

/** `{k: string|null}` with keys `^[A-Za-z0-9-_:.]{1,255}$` and values ≤255 (BS-7.3.2). */
export function parseExtraSpecs(value: unknown, field = 'extra_specs'): ExtraSpecs {
  const obj = expectObject(value, field);
  const out: ExtraSpecs = {};
  for (const [k, v] of Object.entries(obj)) {
    if (!SPEC_KEY.test(k))
      throw fieldError(
        field,
        obj,
        `'${k.slice(0, 100)}' does not match any of the regexes: '^[a-zA-Z0-9-_:.]{1,255}$'`,
      );
    if (v === null) {
      out[k] = null;
      continue;
    }
    // Upstream coerces numbers and booleans in spec values to strings; keep that leniency.
    if (typeof v === 'number' || typeof v === 'boolean') {
      out[k] = String(v);
      continue;
    }
    out[k] = parseString(v, field, { max: 255 });
  }
  return out;
}

/**
 * Setting both `multiattach` and `cacheable` to `<is> True` is refused (BS-7.3.4): a cacheable
 * volume cannot be multi-attached.
 */
export function assertCompatibleSpecs(specs: Readonly<Record<string, string | null>>): void {
  const isTrue = (v: string | null | undefined): boolean =>
    typeof v === 'string' && /^<is>\s+true$/i.test(v.trim());
  if (isTrue(specs['multiattach']) && isTrue(specs['cacheable'])) {
    throw new InvalidInputError(
      'Invalid input received: multiattach and cacheable cannot both be enabled on a volume type.',
    );
  }
}

export interface CreateVolumeTypeInput {
  readonly name: string;
  readonly description: string | null;
  readonly isPublic: boolean;
  readonly extraSpecs: ExtraSpecs;
}

/** `POST /types` body (strict, BS-7.2.3). */
export function parseCreateVolumeType(body: unknown): CreateVolumeTypeInput {
  const t = requireEnvelope(body, 'volume_type');
  rejectUnknownKeys(
    t,
    ['name', 'description', 'extra_specs', 'os-volume-type-access:is_public'],
    'volume_type',
  );
  const name = parseRequiredName(requireKey(t, 'name', 'volume_type'), 'name');
  const description = has(t, 'description') ? parseDescription(t['description']) : null;
  const isPublic = has(t, 'os-volume-type-access:is_public')
    ? parseBoolean(t['os-volume-type-access:is_public'], 'os-volume-type-access:is_public')
    : true;
  const extraSpecs = has(t, 'extra_specs') ? parseExtraSpecs(t['extra_specs']) : {};
  assertCompatibleSpecs(extraSpecs);
  return { name, description, isPublic, extraSpecs };
}

export interface UpdateVolumeTypeInput {
  readonly name?: string;
  readonly description?: string | null;
  readonly isPublic?: boolean;
}

/** `PUT /types/{id}` body (strict, BS-7.2.4): at least one of name, description, is_public. */
export function parseUpdateVolumeType(body: unknown): UpdateVolumeTypeInput {
  const t = requireEnvelope(body, 'volume_type');
  rejectUnknownKeys(t, ['name', 'description', 'is_public'], 'volume_type');
  const out: { name?: string; description?: string | null; isPublic?: boolean } = {};
  if (has(t, 'name') && t['name'] !== null) out.name = parseRequiredName(t['name'], 'name');
  if (has(t, 'description')) out.description = parseDescription(t['description']);
  if (has(t, 'is_public') && t['is_public'] !== null)
    out.isPublic = parseBoolean(t['is_public'], 'is_public');
  if (out.name === undefined && !('description' in out) && out.isPublic === undefined) {
    throw new InvalidInputError(
      'Invalid input received: Specify volume type name, description, is_public or a combination thereof.',
    );
  }
  return out;
}

/** `POST /types/{id}/extra_specs` body (strict): `{"extra_specs": {...}}`. */
export function parseSetExtraSpecs(body: unknown): ExtraSpecs {
  const specs = parseExtraSpecs(requireEnvelope(body, 'extra_specs'));
  return specs;
}

/**
 * `PUT /types/{id}/extra_specs/{key}` body: exactly one pair whose key equals the URL key
 * (BS-7.3.3). Returns the pair.
 */
export function parseUpdateExtraSpec(key: string, body: unknown): { key: string; value: string | null } {
  if (body === undefined || body === null) throw new InvalidInputError('Missing request body.');
  const specs = parseExtraSpecs(expectObject(body, 'extra_specs'));
  const keys = Object.keys(specs);
  if (keys.length !== 1)
    throw new InvalidInputError(
      'Request body contains too many items; exactly one key-value pair is expected.',
    );
  if (keys[0] !== key) throw new InvalidInputError('Request body and URI mismatch');
  return { key, value: specs[key] ?? null };
}

export const CONTROL_LOCATIONS = ['front-end', 'back-end'] as const;
export type ControlLocation = (typeof CONTROL_LOCATIONS)[number];

export interface EncryptionInput {
  readonly provider?: string;
  readonly controlLocation?: ControlLocation;
  readonly cipher?: string | null;
  readonly keySize?: number | null;
}

function parseEncryptionFields(e: JsonObject, create: boolean): EncryptionInput {
  const out: {
    provider?: string;
    controlLocation?: ControlLocation;
    cipher?: string | null;
    keySize?: number | null;
  } = {};
  if (create) requireKey(e, 'provider', 'encryption');
  if (has(e, 'provider')) out.provider = parseRequiredString(e['provider'], 'provider', { min: 1, max: 255 });
  if (has(e, 'control_location')) {
    const cl = e['control_location'];
    if (typeof cl !== 'string' || !(CONTROL_LOCATIONS as readonly string[]).includes(cl)) {
      throw fieldError('control_location', cl, "is not one of ['front-end', 'back-end']");
    }
    out.controlLocation = cl as ControlLocation;
  } else if (create) {
    // Seed 002 marks control_location optional with front-end as default (spec section 14).
    out.controlLocation = 'front-end';
  }
  if (has(e, 'cipher')) out.cipher = parseString(e['cipher'], 'cipher', { max: 255, nullable: true });
  if (has(e, 'key_size'))
    out.keySize = e['key_size'] === null ? null : parseInteger(e['key_size'], 'key_size', 0, 65536);
  return out;
}

/** `POST /types/{id}/encryption` body (BS-7.4.2; extra keys tolerated). */
export function parseCreateEncryption(
  body: unknown,
): Required<Pick<EncryptionInput, 'provider' | 'controlLocation'>> & EncryptionInput {
  const parsed = parseEncryptionFields(requireEnvelope(body, 'encryption'), true);
  return {
    ...parsed,
    provider: parsed.provider ?? '',
    controlLocation: parsed.controlLocation ?? 'front-end',
  };
}

/** `PUT /types/{id}/encryption/{encryption_id}` body: same fields, all optional (BS-7.4.3). */
export function parseUpdateEncryption(body: unknown): EncryptionInput {
  return parseEncryptionFields(requireEnvelope(body, 'encryption'), false);
}

export type TypeAccessAction = {
  readonly action: 'addProjectAccess' | 'removeProjectAccess';
  readonly project: string;
};

/** `POST /types/{id}/action` with `addProjectAccess` or `removeProjectAccess` (BS-7.5). */
export function parseTypeAccessAction(body: unknown): TypeAccessAction {
  if (body === undefined || body === null) throw new InvalidInputError('Missing request body.');
  const obj = expectObject(body, 'action');
  const keys = Object.keys(obj);
  if (keys.length !== 1)
    throw new InvalidInputError('Invalid input received: exactly one action is expected.');
  const action = keys[0] ?? '';
  if (action !== 'addProjectAccess' && action !== 'removeProjectAccess') {
    throw new InvalidInputError(`There is no such action: ${action.slice(0, 100)}`);
  }
  const inner = expectObject(obj[action], action);
  rejectUnknownKeys(inner, ['project'], action);
  const project = parseRequiredString(requireKey(inner, 'project', action), 'project', { min: 1, max: 255 });
  return { action, project };
}

/** `PUT /default-types/{project_id}` body (strict): `{"default_type": {"volume_type": "<name or id>"}}`. */
export function parseSetDefaultType(body: unknown): { volumeType: string } {
  const d = requireEnvelope(body, 'default_type');
  rejectUnknownKeys(d, ['volume_type'], 'default_type');
  const volumeType = parseRequiredName(requireKey(d, 'volume_type', 'default_type'), 'volume_type');
  return { volumeType };
}
