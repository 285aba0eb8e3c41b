import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { snapshotQuotaDeltas } from '@osc/block-storage-domain';
import {
  QuotaRepository,
  SnapshotRepository,
  type StoredSnapshot,
  type StoredVolume,
} from '@osc/block-storage-persistence';
import type { OutboxItem, OutboxWriter } from '@osc/messaging';
import type { ApiRequest } from '../http/api-request';

const snapshots = new SnapshotRepository();
const quotas = new QuotaRepository();

/**
 * A new snapshot of volume `v` (a create, or a manage that adopts a file: `manageSource`), owned
 * by the caller's project: `creating` at 0%, of the volume's size and type, counted against quota.
 */
export function newSnapshotOf(
  api: ApiRequest,
  v: StoredVolume,
  input: Pick<StoredSnapshot, 'name' | 'description' | 'metadata'>,
  now: Date,
  manageSource?: string,
): StoredSnapshot {
  return {
    id: randomUUID(),
    projectId: api.ctx.projectId,
    userId: api.ctx.userId,
    volumeId: v.id,
    volumeTypeId: v.volumeTypeId,
    name: input.name,
    description: input.description,
    size: v.size,
    status: 'creating',
    progress: '0%',
    metadata: input.metadata,
    groupSnapshotId: null,
    consumesQuota: true,
    host: v.host,
    ...(manageSource === undefined ? {} : { manageSource }),
    createdAt: now,
    updatedAt: null,
  };
}

/**
 * Charges the snapshot to its project (snapshots and gigabytes, per type too; 413 over quota),
 * inserts the row and queues its back end's `job`, in one transaction.
 */
export async function recordSnapshot(
  db: DataSource,
  outbox: OutboxWriter,
  v: StoredVolume,
  snapshot: StoredSnapshot,
  job: OutboxItem,
): Promise<void> {
  await db.transaction(async (em) => {
    await quotas.apply(em, snapshot.projectId, snapshotQuotaDeltas(v.size, v.volumeTypeName));
    await snapshots.insert(em, snapshot);
    await outbox.add(em, job);
  });
}
