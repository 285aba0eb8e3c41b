import type { DataSource } from 'typeorm';
import { progressPercent, progressStepReached } from '@osc/block-storage-domain';
import { BackupRepository, recordProgress, type StoredBackup } from '@osc/block-storage-persistence';
import type { Clock } from '@osc/platform';
import { productMetrics } from '@osc/telemetry';
import type { ProgressReport } from './backup-engine';

const backups = new BackupRepository();

/** A failed job's reason as rows and logs keep it (at most 1,000 characters). */
export const failureReason = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).slice(0, 1000);

/**
 * The progress report of a running create or restore: stores the percent (and bumps updated_at,
 * which the reconciler watches) while the backup is still in `status`, tells the story at each
 * 10% step, and answers false once the backup left that status (the job must stop).
 */
export function progressReport(
  db: DataSource,
  clock: Clock,
  b: StoredBackup,
  status: 'creating' | 'restoring',
  restoreVolumeId: string | null,
): ProgressReport {
  let last = 0;
  return async (done, total) => {
    const percent = progressPercent(done, total);
    if (!(await backups.reportProgress(db, b.id, status, clock.now(), percent))) return false;
    const step = progressStepReached(last, percent);
    last = percent;
    if (step !== null)
      recordProgress({
        operation: status === 'creating' ? 'create' : 'restore',
        backupId: b.id,
        volumeId: b.volumeId,
        snapshotId: b.snapshotId,
        projectId: b.projectId,
        restoreVolumeId,
        progress: step,
      });
    return true;
  };
}

/** A finished backup create or restore: its volume bytes and throughput (docs/metrics.md). */
export function observeBackup(operation: 'create' | 'restore', bytes: number, started: bigint): void {
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  productMetrics.backupBytes.labels(operation).inc(bytes);
  if (seconds > 0) productMetrics.backupThroughput.labels(operation).observe(bytes / seconds);
}
