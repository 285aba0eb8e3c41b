import { isAtLeast, supports, type Microversion } from '../microversions/microversion';
import type { AttachmentValue, VolumeValue } from '../model/resources';
import { displayVolumeStatus } from '../state/volume-status';
import { formatTimestamp, resourceLinks, type LinkContext } from './links';

/** Everything a view needs to know about the request besides the resource. */
export interface ViewContext {
  readonly mv: Microversion;
  readonly isAdmin: boolean;
  readonly links: LinkContext;
}

/**
 * Which detail view: `show` and `list` (GET) carry the extended attributes; `create` and
 * `update` responses do not (BS-7.7.8).
 */
export type VolumeViewKind = 'show' | 'list' | 'create' | 'update';

/** Admin-metadata keys that are shown inside `metadata` (BS-7.7.9). */
const SHOWN_ADMIN_METADATA = ['readonly', 'attached_mode'] as const;

export const volumeSummaryView = (ctx: ViewContext, v: VolumeValue): Record<string, unknown> => ({
  id: v.id,
  name: v.name,
  links: resourceLinks(ctx.links, 'volumes', v.id),
});

function attachmentView(ctx: ViewContext, a: AttachmentValue): Record<string, unknown> {
  return {
    id: a.volumeId,
    attachment_id: a.id,
    volume_id: a.volumeId,
    server_id: a.serverId,
    host_name: ctx.isAdmin ? a.hostName : null,
    device: a.device,
    attached_at: formatTimestamp(a.attachedAt),
  };
}

/** The volume detail view for microversion `ctx.mv` (BS-7.7.8), admin fields only for admins (BS-2.8). */
export function volumeDetailView(
  ctx: ViewContext,
  v: VolumeValue,
  kind: VolumeViewKind,
): Record<string, unknown> {
  const metadata: Record<string, string> = { ...v.metadata };
  for (const k of SHOWN_ADMIN_METADATA) {
    const value = v.adminMetadata[k];
    if (value !== undefined) metadata[k] = value;
  }
  const out: Record<string, unknown> = {
    id: v.id,
    name: v.name,
    description: v.description,
    status: displayVolumeStatus(v.status),
    size: v.size,
    availability_zone: v.availabilityZone,
    created_at: formatTimestamp(v.createdAt),
    updated_at: formatTimestamp(v.updatedAt),
    volume_type: v.volumeTypeName,
    snapshot_id: v.snapshotId,
    source_volid: v.sourceVolid,
    metadata,
    links: resourceLinks(ctx.links, 'volumes', v.id),
    user_id: v.userId,
    bootable: v.bootable ? 'true' : 'false',
    encrypted: v.encrypted,
    replication_status: v.replicationStatus,
    consistencygroup_id: v.consistencygroupId,
    multiattach: v.multiattach,
    attachments: v.attachments
      .filter((a) => a.attachStatus === 'attached')
      .map((a) => attachmentView(ctx, a)),
  };
  if (ctx.isAdmin) out['migration_status'] = v.migrationStatus;
  if (supports(ctx.mv, 'volume.group-id')) out['group_id'] = v.groupId;
  if (supports(ctx.mv, 'volume.provider-id') && ctx.isAdmin) out['provider_id'] = v.providerId;
  if (supports(ctx.mv, 'volume.shared-targets')) {
    // Below 3.69 an unknown (null) shared_targets is shown as true (BS-4.8).
    out['shared_targets'] =
      v.sharedTargets === null && !supports(ctx.mv, 'volume.shared-targets-nullable')
        ? true
        : v.sharedTargets;
    out['service_uuid'] = v.serviceUuid;
  }
  if (supports(ctx.mv, 'volume.cluster-name') && ctx.isAdmin) out['cluster_name'] = v.clusterName;
  if (supports(ctx.mv, 'volume.volume-type-id')) out['volume_type_id'] = v.volumeTypeId;
  if (supports(ctx.mv, 'volume.encryption-key-id') && v.encrypted)
    out['encryption_key_id'] = v.encryptionKeyId;
  if (supports(ctx.mv, 'volume.consumes-quota')) out['consumes_quota'] = v.consumesQuota;
  if (kind === 'show' || kind === 'list') {
    out['os-vol-tenant-attr:tenant_id'] = v.projectId;
    if (ctx.isAdmin) {
      out['os-vol-host-attr:host'] = v.host;
      out['os-vol-mig-status-attr:migstat'] = v.migrationStatus;
      out['os-vol-mig-status-attr:name_id'] = v.nameId;
    }
    if (v.imageMetadata !== null) out['volume_image_metadata'] = { ...v.imageMetadata };
  }
  return out;
}

/** Whether list responses may carry `count` (BS-5.4). */
export const listsMayCount = (mv: Microversion): boolean => isAtLeast(mv, '3.45');

/**
 * What {@link volumeDetailView} (kind `list`) shows for one request, as flags and link prefixes,
 * so a store can render the same view itself (the detail list renders its page in the database).
 */
export interface VolumeDetailPlan {
  readonly isAdmin: boolean;
  readonly groupId: boolean;
  readonly providerId: boolean;
  readonly sharedTargets: boolean;
  readonly sharedTargetsNullable: boolean;
  readonly clusterName: boolean;
  readonly volumeTypeId: boolean;
  readonly encryptionKeyId: boolean;
  readonly consumesQuota: boolean;
  /** `self` and `bookmark` hrefs are these prefixes followed by the volume id. */
  readonly selfPrefix: string;
  readonly bookmarkPrefix: string;
  /** Internal status → displayed status. */
  readonly displayedStatus: Readonly<Record<string, string>>;
  /** Admin-metadata keys shown inside `metadata`. */
  readonly shownAdminMetadata: readonly string[];
}

export function volumeDetailPlan(ctx: ViewContext): VolumeDetailPlan {
  const [self, bookmark] = resourceLinks(ctx.links, 'volumes', '');
  const displayedStatus: Record<string, string> = {};
  for (const s of ['managing', 'error_managing', 'error_managing_deleting'] as const)
    displayedStatus[s] = displayVolumeStatus(s);
  return {
    isAdmin: ctx.isAdmin,
    groupId: supports(ctx.mv, 'volume.group-id'),
    providerId: supports(ctx.mv, 'volume.provider-id'),
    sharedTargets: supports(ctx.mv, 'volume.shared-targets'),
    sharedTargetsNullable: supports(ctx.mv, 'volume.shared-targets-nullable'),
    clusterName: supports(ctx.mv, 'volume.cluster-name'),
    volumeTypeId: supports(ctx.mv, 'volume.volume-type-id'),
    encryptionKeyId: supports(ctx.mv, 'volume.encryption-key-id'),
    consumesQuota: supports(ctx.mv, 'volume.consumes-quota'),
    selfPrefix: self?.href ?? '',
    bookmarkPrefix: bookmark?.href ?? '',
    displayedStatus,
    shownAdminMetadata: SHOWN_ADMIN_METADATA,
  };
}
