import { canTransition } from '../state/transition-table';
import { isMigrating, VOLUME_TRANSITIONS, type VolumeStatus } from '../state/volume-status';
import type { Timestamp } from '../model/resources';
import { formatTimestamp } from '../views/links';

/**
 * Attachment statuses (Cinder's `VolumeAttachStatus`); a volume's `attach_status` takes the same
 * values (`detached` when it has no live attachment).
 */
export const ATTACH_STATUSES = [
  'reserved',
  'attaching',
  'attached',
  'detaching',
  'detached',
  'error_attaching',
  'error_detaching',
] as const;
export type AttachStatus = (typeof ATTACH_STATUSES)[number];

/** `attach_mode` of an attachment: `null` (the string) until a mode is known, as Cinder stores it. */
export type AttachMode = 'rw' | 'ro' | 'null';

/** An attachment as stored (Cinder's `volume_attachment` row). */
export interface AttachmentRecord {
  readonly id: string;
  readonly volumeId: string;
  readonly instanceUuid: string | null;
  readonly attachedHost: string | null;
  readonly mountpoint: string | null;
  readonly attachStatus: AttachStatus;
  readonly attachMode: AttachMode;
  readonly attachTime: Timestamp | null;
  readonly detachTime: Timestamp | null;
  readonly connector: Readonly<Record<string, unknown>> | null;
  readonly connectionInfo: Readonly<Record<string, unknown>> | null;
}

/** Statuses of the attach flow (BS-8.1.9): the only ones attach operations read or write. */
const ATTACH_FLOW: readonly VolumeStatus[] = ['available', 'reserved', 'attaching', 'in-use', 'detaching'];

/**
 * The `IN (...)` set of an attach-flow compare-and-set to `to`: the attach-flow statuses the
 * volume transition table lets enter `to`, plus `to` itself (Cinder writes these statuses
 * unconditionally, so repeating a step is no change, not a refusal). A volume busy with any
 * other operation (backing-up, extending, maintenance, …) never matches.
 */
export const attachFlowSources = (to: VolumeStatus): VolumeStatus[] =>
  ATTACH_FLOW.filter((from) => from === to || canTransition(VOLUME_TRANSITIONS, from, to));

/**
 * The volume's status and attach_status once an attachment is gone, from the attachments left
 * (Cinder's `_get_statuses_from_attachments`): error attachments are ignored; the first of the
 * rest in alphabetical order wins (attached > attaching > detaching > reserved); none left →
 * detached. attached shows as `in-use`, detached as `available`. `status` is null when Cinder
 * leaves the status alone: the last attachment of a migrating or uploading volume (those flows
 * set the status themselves).
 */
export function statusAfterDetach(
  remaining: readonly AttachStatus[],
  volume: { readonly status: VolumeStatus; readonly migrationStatus: string | null },
): { status: VolumeStatus | null; attachStatus: AttachStatus } {
  const live = remaining.filter((s) => !s.startsWith('error_')).sort();
  const attachStatus: AttachStatus = live[0] ?? 'detached';
  const status: VolumeStatus =
    attachStatus === 'attached'
      ? 'in-use'
      : attachStatus === 'detached'
        ? 'available'
        : (attachStatus as VolumeStatus);
  const busy = isMigrating(volume.migrationStatus) || volume.status === 'uploading';
  return { status: attachStatus === 'detached' && busy ? null : status, attachStatus };
}

/**
 * The mode a connection is made in (Cinder's manager `attachment_update`): the attachment's mode
 * once one was chosen at create (3.54) or forced by the `readonly` admin flag, else the
 * connector's `mode`, else `rw`.
 */
export function connectionMode(
  attachMode: AttachMode,
  connector: Readonly<Record<string, unknown>>,
): 'rw' | 'ro' {
  if (attachMode !== 'null') return attachMode;
  return connector['mode'] === 'ro' ? 'ro' : 'rw';
}

/** `attach_mode` stored by attachment create: `ro` when the volume is flagged readonly (deprecated upstream, still honoured), else the 3.54 `mode`, else `null`. */
export const createAttachMode = (readonlyFlag: string | undefined, mode: 'rw' | 'ro' | null): AttachMode =>
  readonlyFlag === 'True' || readonlyFlag === 'true' ? 'ro' : (mode ?? 'null');

/** Cinder's attachment view `_normalize`: a timestamp, or `''` when unset. */
const normalized = (t: Timestamp | null): string => formatTimestamp(t) ?? '';

/** Summary view (`GET /attachments`, the list `DELETE` returns). */
export const attachmentSummaryView = (a: AttachmentRecord): Record<string, unknown> => ({
  id: a.id,
  status: a.attachStatus,
  instance: a.instanceUuid,
  volume_id: a.volumeId,
});

/** Detail view (`GET /attachments/{id}`, `/attachments/detail`, create and update responses). */
export const attachmentDetailView = (a: AttachmentRecord): Record<string, unknown> => ({
  ...attachmentSummaryView(a),
  attached_at: normalized(a.attachTime),
  detached_at: normalized(a.detachTime),
  attach_mode: a.attachMode,
  connection_info: a.connectionInfo ?? {},
});

/** Sort keys of `GET /attachments` (Cinder sorts attachments by their columns; default created_at desc, id). */
export const ATTACHMENT_SORT_KEYS = [
  'created_at',
  'updated_at',
  'id',
  'volume_id',
  'instance_uuid',
  'attach_status',
  'attached_host',
] as const;

/**
 * Whether a volume type makes its volumes multiattach (Cinder `_is_multiattach`: the extra spec
 * `multiattach` is exactly `<is> True`).
 */
export const isMultiattachSpec = (extraSpecs: Readonly<Record<string, string | null>>): boolean =>
  extraSpecs['multiattach'] === '<is> True';
