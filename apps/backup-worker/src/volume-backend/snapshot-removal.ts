import type { DataSource } from 'typeorm';
import { snapshotQuotaDeltas, type SnapshotStatus } from '@osc/block-storage-domain';
import {
  QuotaRepository,
  SnapshotRepository,
  VolumeTypeRepository,
  type StoredSnapshot,
} from '@osc/block-storage-persistence';
import type { Clock } from '@osc/platform';

const snapshots = new SnapshotRepository();
const quotas = new QuotaRepository();
const types = new VolumeTypeRepository();

/**
 * The end of a snapshot delete or unmanage: the row goes (compare-and-set on `from`, the status
 * the job was queued in) and, when the snapshot counted against the project's quota, its
 * snapshots and gigabytes (per type too) are given back, in one transaction. A row that already
 * left `from` changes nothing, so a redelivered job releases the quota once.
 */
export async function removeSnapshotRow(
  db: DataSource,
  clock: Clock,
  s: StoredSnapshot,
  from: Extract<SnapshotStatus, 'deleting' | 'unmanaging'>,
): Promise<void> {
  const typeName = s.volumeTypeId === null ? null : ((await types.findAny(db, s.volumeTypeId))?.name ?? null);
  await db.transaction(async (em) => {
    const removed = await snapshots.softDelete(em, s.id, [from], clock.now());
    if (removed && removed.consumesQuota)
      await quotas.apply(
        em,
        removed.projectId,
        snapshotQuotaDeltas(removed.size, typeName, -1),
        'in_use',
        false,
      );
  });
}
