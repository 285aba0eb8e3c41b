import { InvalidInputError } from '@osc/errors';
import { supports, type Microversion } from '../microversions/microversion';
import {
  echoValue,
  expectObject,
  fieldError,
  has,
  isJsonObject,
  parseUuid,
  rejectUnknownKeys,
  requireEnvelope,
  requireKey,
  type JsonObject,
} from '../validation/primitives';

/** A connector as sent by os-brick / Nova / cinderclient (free-form object). */
export type Connector = Readonly<Record<string, unknown>>;

export interface AttachmentCreateInput {
  readonly volumeId: string;
  readonly instanceUuid: string | null;
  /** Null (or `{}`, which Cinder treats the same) → reserve only. */
  readonly connector: Connector | null;
  /** 3.54 `mode`; null when not given. */
  readonly mode: 'rw' | 'ro' | null;
}

const typeError = (field: string, value: unknown, type: string): InvalidInputError =>
  fieldError(
    field,
    value,
    `${typeof value === 'string' ? `'${value}'` : echoValue(value)} is not of type ${type}`,
  );

/**
 * `POST /attachments` (Cinder's `attachments.create` / `create_v354` schemas): `volume_uuid`
 * required, `instance_uuid` a uuid, `connector` an object or null, `mode` rw|ro from 3.54;
 * nothing else.
 */
export function parseAttachmentCreate(body: unknown, mv: Microversion): AttachmentCreateInput {
  const a = requireEnvelope(body, 'attachment');
  const withMode = supports(mv, 'attachments.mode');
  rejectUnknownKeys(
    a,
    withMode
      ? ['volume_uuid', 'instance_uuid', 'connector', 'mode']
      : ['volume_uuid', 'instance_uuid', 'connector'],
    'attachment',
  );
  const volumeId = parseUuid(requireKey(a, 'volume_uuid', 'attachment'), 'volume_uuid');
  const instanceUuid = has(a, 'instance_uuid') ? parseUuid(a['instance_uuid'], 'instance_uuid') : null;
  const rawConnector = a['connector'] ?? null;
  if (rawConnector !== null && !isJsonObject(rawConnector))
    throw typeError('connector', rawConnector, "'object', 'null'");
  const connector = rawConnector !== null && Object.keys(rawConnector).length > 0 ? rawConnector : null;
  let mode: 'rw' | 'ro' | null = null;
  if (withMode && has(a, 'mode')) {
    if (a['mode'] !== 'rw' && a['mode'] !== 'ro')
      throw fieldError('mode', a['mode'], `${echoValue(a['mode'])} is not one of ['rw', 'ro']`);
    mode = a['mode'];
  }
  return { volumeId, instanceUuid, connector, mode };
}

/** `PUT /attachments/{id}` (Cinder's `attachments.update`): `{"attachment": {"connector": {…at least one key}}}`. */
export function parseAttachmentUpdate(body: unknown): Connector {
  const a = requireEnvelope(body, 'attachment');
  rejectUnknownKeys(a, ['connector'], 'attachment');
  const connector = requireKey(a, 'connector', 'attachment');
  if (!isJsonObject(connector)) throw typeError('connector', connector, "'object'");
  if (Object.keys(connector).length === 0)
    throw fieldError('connector', connector, '{} does not have enough properties');
  return connector;
}

/** `POST /attachments/{id}/action` with `{"os-complete": …}` (any value, nothing else). */
export function parseAttachmentAction(body: unknown): 'os-complete' {
  if (body === undefined || body === null) throw new InvalidInputError('Missing request body.');
  if (!isJsonObject(body)) throw new InvalidInputError('Malformed request body');
  const keys = Object.keys(body);
  if (!keys.includes('os-complete'))
    throw new InvalidInputError(`There is no such action: ${(keys[0] ?? '(none)').slice(0, 100)}`);
  rejectUnknownKeys(body, ['os-complete'], null);
  return 'os-complete';
}

/** Legacy `os-attach` arguments (Cinder's `volume_actions.attach` schema). */
export interface AttachArgs {
  readonly instanceUuid: string | null;
  readonly hostName: string | null;
  readonly mountpoint: string;
  readonly mode: 'rw' | 'ro';
}

export function parseAttachArgs(args: unknown): AttachArgs {
  const a = expectObject(args, 'os-attach');
  rejectUnknownKeys(a, ['instance_uuid', 'mountpoint', 'host_name', 'mode'], 'os-attach');
  const mountpoint = requireKey(a, 'mountpoint', 'os-attach');
  if (typeof mountpoint !== 'string') throw typeError('mountpoint', mountpoint, "'string'");
  if (mountpoint.length < 1 || mountpoint.length > 255)
    throw fieldError('mountpoint', mountpoint, 'is not 1 to 255 characters long');
  if (!has(a, 'instance_uuid') && !has(a, 'host_name')) {
    throw fieldError('os-attach', a, "'instance_uuid' or 'host_name' is a required property");
  }
  const instanceUuid = has(a, 'instance_uuid') ? parseUuid(a['instance_uuid'], 'instance_uuid') : null;
  let hostName: string | null = null;
  if (has(a, 'host_name')) {
    if (typeof a['host_name'] !== 'string') throw typeError('host_name', a['host_name'], "'string'");
    if (a['host_name'].length > 255) throw fieldError('host_name', a['host_name'], 'is too long');
    hostName = a['host_name'];
  }
  let mode: 'rw' | 'ro' = 'rw';
  if (has(a, 'mode')) {
    if (a['mode'] !== 'rw' && a['mode'] !== 'ro')
      throw fieldError('mode', a['mode'], `${echoValue(a['mode'])} is not one of ['rw', 'ro']`);
    mode = a['mode'];
  }
  return { instanceUuid, hostName, mountpoint, mode };
}

/** Legacy `os-detach` (`null` or `{"attachment_id": uuid|null}`). */
export function parseDetachArgs(args: unknown): { attachmentId: string | null } {
  if (args === null || args === undefined) return { attachmentId: null };
  const a = expectObject(args, 'os-detach');
  rejectUnknownKeys(a, ['attachment_id'], 'os-detach');
  const id = a['attachment_id'] ?? null;
  return { attachmentId: id === null ? null : parseUuid(id, 'attachment_id') };
}

/**
 * `os-initialize_connection` / `os-terminate_connection` / `os-force_detach` connector argument:
 * Cinder's schemas accept an object or a string (and null where noted); a string connector is
 * passed to the driver, which here cannot use it (refused by the connection check).
 */
export function parseConnectorArg(
  args: unknown,
  action: string,
  options: { nullable: boolean; required: boolean },
): Connector | string | null {
  const a: JsonObject = expectObject(args, action);
  rejectUnknownKeys(a, action === 'os-force_detach' ? ['connector', 'attachment_id'] : ['connector'], action);
  if (options.required) requireKey(a, 'connector', action);
  const c = a['connector'] ?? null;
  if (c === null) {
    if (options.nullable || !options.required) return null;
    throw typeError('connector', c, "'object', 'string'");
  }
  if (typeof c === 'string' || isJsonObject(c)) return c;
  throw typeError('connector', c, options.nullable ? "'string', 'object', 'null'" : "'object', 'string'");
}

/** `os-force_detach` `attachment_id` (a string or null in Cinder's schema). */
export function parseForceDetachAttachmentId(args: unknown): string | null {
  const a = expectObject(args, 'os-force_detach');
  const id = a['attachment_id'] ?? null;
  if (id !== null && typeof id !== 'string') throw typeError('attachment_id', id, "'string', 'null'");
  return id;
}
