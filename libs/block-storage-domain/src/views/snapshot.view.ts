import { supports } from '../microversions/microversion';
import type { SnapshotValue } from '../model/resources';
import { formatTimestamp } from './links';
import type { ViewContext } from './volume.view';

/**
 * Snapshot view (BS-7.8.1). Snapshots carry no links. `detail` (show and detail list) adds the
 * extended attributes `project_id` and `progress`.
 */
export function snapshotView(ctx: ViewContext, s: SnapshotValue, detail: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: s.id,
    created_at: formatTimestamp(s.createdAt),
    updated_at: formatTimestamp(s.updatedAt),
    name: s.name,
    description: s.description,
    status: s.status,
    size: s.size,
    volume_id: s.volumeId,
    metadata: { ...s.metadata },
  };
  if (supports(ctx.mv, 'group-snapshots.api')) out['group_snapshot_id'] = s.groupSnapshotId;
  if (supports(ctx.mv, 'snapshot.user-id')) out['user_id'] = s.userId;
  if (supports(ctx.mv, 'volume.consumes-quota')) out['consumes_quota'] = s.consumesQuota;
  if (detail) {
    out['os-extended-snapshot-attributes:project_id'] = s.projectId;
    out['os-extended-snapshot-attributes:progress'] =
      s.progress ?? (s.status === 'available' ? '100%' : '0%');
  }
  return out;
}
