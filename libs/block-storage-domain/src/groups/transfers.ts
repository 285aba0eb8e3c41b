import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidInputError } from '@osc/errors';
import type { Timestamp } from '../model/resources';
import { supports, type Microversion } from '../microversions/microversion';
import { formatTimestamp, resourceLinks, type LinkContext } from '../views/links';
import {
  fieldError,
  has,
  parseBoolean,
  parseName,
  parseUuid,
  rejectUnknownKeys,
  requireEnvelope,
  requireKey,
} from '../validation/primitives';

/** A volume transfer (BS-7.10). The auth key itself is never stored, only its salted keyed hash. */
export interface TransferValue {
  readonly id: string;
  readonly volumeId: string;
  readonly name: string | null;
  readonly salt: string;
  readonly cryptHash: string;
  readonly noSnapshots: boolean;
  readonly sourceProjectId: string;
  readonly destinationProjectId: string | null;
  readonly accepted: boolean;
  readonly createdAt: Timestamp;
}

/** HMAC-SHA1 of the auth key keyed by the salt, hex (BS-7.10.3). */
export const transferKeyHash = (salt: string, authKey: string): string =>
  createHmac('sha1', salt).update(authKey).digest('hex');

/** Constant-time comparison of a presented key with the stored hash. */
export function transferKeyMatches(t: Pick<TransferValue, 'salt' | 'cryptHash'>, presented: string): boolean {
  const a = Buffer.from(transferKeyHash(t.salt, presented), 'utf8');
  const b = Buffer.from(t.cryptHash, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface CreateTransferInput {
  readonly volumeId: string;
  readonly name: string | null;
  readonly noSnapshots: boolean;
}

/**
 * `{"transfer": {volume_id, name, no_snapshots}}` (BS-7.10.2, strict). `no_snapshots` only on the
 * 3.55 route family (`newApi`).
 */
export function parseCreateTransfer(body: unknown, newApi: boolean): CreateTransferInput {
  const t = requireEnvelope(body, 'transfer');
  rejectUnknownKeys(t, newApi ? ['volume_id', 'name', 'no_snapshots'] : ['volume_id', 'name'], 'transfer');
  const volumeId = parseUuid(requireKey(t, 'volume_id', 'transfer'), 'volume_id');
  const name = has(t, 'name') ? parseName(t['name'], 'name', { nullable: true }) : null;
  if (name !== null && name.length === 0)
    throw fieldError('name', t['name'], 'Name has a null string or only whitespace.');
  const noSnapshots =
    newApi && has(t, 'no_snapshots') ? parseBoolean(t['no_snapshots'], 'no_snapshots') : false;
  return { volumeId, name, noSnapshots };
}

/** `{"accept": {"auth_key": string | integer}}` (BS-7.10.5, strict). */
export function parseAcceptTransfer(body: unknown): string {
  const a = requireEnvelope(body, 'accept');
  rejectUnknownKeys(a, ['auth_key'], 'accept');
  const key = requireKey(a, 'auth_key', 'accept');
  if (typeof key === 'number' && Number.isInteger(key)) return String(key);
  if (typeof key !== 'string')
    throw fieldError('auth_key', key, `${JSON.stringify(key)} is not of type 'string', 'integer'`);
  if (key.length === 0 || key.length > 255)
    throw new InvalidInputError(
      `Invalid input for field/attribute auth_key. Value: ${key.slice(0, 120)}. length must be 1..255`,
    );
  return key;
}

export interface TransferViewContext {
  readonly mv: Microversion;
  readonly links: LinkContext;
}

const links = (ctx: TransferViewContext, id: string) => resourceLinks(ctx.links, 'os-volume-transfer', id);

function versioned(
  ctx: TransferViewContext,
  t: TransferValue,
  out: Record<string, unknown>,
): Record<string, unknown> {
  if (supports(ctx.mv, 'transfers.no-snapshots')) out['no_snapshots'] = t.noSnapshots;
  if (supports(ctx.mv, 'transfers.project-fields')) {
    out['source_project_id'] = t.sourceProjectId;
    out['destination_project_id'] = t.destinationProjectId;
    out['accepted'] = t.accepted;
  }
  return out;
}

/** List item (BS-7.10.4). */
export const transferSummaryView = (ctx: TransferViewContext, t: TransferValue): Record<string, unknown> => ({
  id: t.id,
  volume_id: t.volumeId,
  name: t.name,
  links: links(ctx, t.id),
});

/** Detail list item and show (BS-7.10.4). */
export const transferDetailView = (ctx: TransferViewContext, t: TransferValue): Record<string, unknown> =>
  versioned(ctx, t, {
    id: t.id,
    created_at: formatTimestamp(t.createdAt),
    name: t.name,
    volume_id: t.volumeId,
    links: links(ctx, t.id),
  });

/** Create response: the only place the auth key appears (BS-7.10.2). */
export const transferCreateView = (
  ctx: TransferViewContext,
  t: TransferValue,
  authKey: string,
): Record<string, unknown> =>
  versioned(ctx, t, {
    id: t.id,
    created_at: formatTimestamp(t.createdAt),
    name: t.name,
    volume_id: t.volumeId,
    auth_key: authKey,
    links: links(ctx, t.id),
  });

/** Accept response (BS-7.10.5). */
export const transferAcceptView = (ctx: TransferViewContext, t: TransferValue): Record<string, unknown> =>
  transferSummaryView(ctx, t);
