import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  migrationRecoveryJob,
  snapshotRecoveryJob,
  volumeRecoveryJob,
  VOLUME_OPERATIONS,
} from '@osc/block-storage-domain';
import { QuotaRepository, VolumeRepository } from '@osc/block-storage-persistence';
import { MIGRATION_JOB_METADATA_KEY } from '@osc/contracts';
import type { JobQueue } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, JOB_QUEUE, type Clock } from '@osc/platform';
import { FileVolumeDriver } from './file-volume-driver';
import { removeFile } from './sparse-file';
import { VolumeOperations } from './volume-operations';

/**
 * What this back end does when it starts, after its worker takes jobs: drive again the work a
 * restart interrupted, and remove the volume files it no longer owns.
 */
@Injectable()
export class CrashRecovery {
  private readonly log = new Logger('volume-backend');
  private readonly volumes = new VolumeRepository();
  private readonly quotas = new QuotaRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly driver: FileVolumeDriver,
    private readonly operations: VolumeOperations,
  ) {}

  /**
   * BS-8.6.2: after a restart, work this back end owns that is stuck in a transitional status is
   * driven again. Job ids match the ones the API and scheduler use, so a job still queued is not
   * doubled; handlers are idempotent anyway. An interrupted extend (its target size is only in the
   * lost job) ends in `error_extending`.
   */
  async recover(): Promise<void> {
    for (const v of await this.volumes.listOnBackend(this.db, this.driver.backend, [
      'creating',
      'deleting',
      'extending',
      'reverting',
      'managing',
      'unmanaging',
    ])) {
      if (v.status === 'creating' && v.host === null) continue;
      const inputs = {
        extendNewSize:
          v.status === 'extending'
            ? ((await this.quotas.reservationsOf(this.db, v.id)).find(
                (r) => r.operation === 'extend' && r.newSize !== null,
              )?.newSize ?? null)
            : null,
        restoringSnapshotId:
          v.status === 'reverting'
            ? ((await this.volumes.snapshotsOf(this.db, v.id)).find((s) => s.status === 'restoring')?.id ??
              null)
            : null,
      };
      const job = volumeRecoveryJob(v, inputs);
      if (job !== null) await this.jobs.add(job.queue, job);
      else if (v.status === 'reverting')
        await this.volumes.transition(this.db, v.id, VOLUME_OPERATIONS.revertFailed, this.clock.now(), {
          error_reason: 'The revert was interrupted and its snapshot is no longer restoring.',
        });
      else if (v.status === 'extending')
        await this.operations.failExtend(
          v.id,
          'The extend was interrupted by a restart of the volume back end.',
        );
    }
    await this.sweepStrayFiles();
    // Migrations to this back end: their job is kept in the volume's admin metadata.
    for (const v of await this.volumes.listMigratingTo(
      this.db,
      this.driver.backend,
      MIGRATION_JOB_METADATA_KEY,
    )) {
      const job = migrationRecoveryJob(v);
      if (job) await this.jobs.add(job.queue, job);
    }
    for (const s of await this.volumes.snapshotsOnBackend(this.db, this.driver.backend, [
      'creating',
      'deleting',
      'unmanaging',
    ])) {
      const job = snapshotRecoveryJob({ ...s, manageSource: s.manageSource ?? null });
      if (job) await this.jobs.add(job.queue, job);
    }
  }

  /**
   * Removes volume files this back end no longer owns: the source copy of a volume that migrated
   * away (a restart between the migration's commit and the removal) and the partial copy of an
   * interrupted migration to here. A file stays while its volume is on this back end, or while a
   * migration of it is still under way (it is driven again below).
   */
  private async sweepStrayFiles(): Promise<void> {
    const files = new Map<string, string[]>();
    for (const name of await readdir(this.driver.directory)) {
      const m = /^volume-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\.migrating)?$/.exec(
        name,
      );
      if (m?.[1]) files.set(m[1], [...(files.get(m[1]) ?? []), name]);
    }
    const placements = await this.volumes.placementsOf(this.db, [...files.keys()]);
    for (const [id, names] of files) {
      const p = placements.get(id);
      if (!p) continue; // not a volume this service knows: leave the operator's file alone
      const migrating = p.migrationStatus === 'starting' || p.migrationStatus === 'migrating';
      for (const name of names) {
        const partial = name.endsWith('.migrating');
        const stray = partial ? !migrating : !migrating && (p.deleted || !this.driver.ownsPool(p.host));
        if (!stray) continue;
        this.log.log(
          `removing ${name}: volume ${id} is ${p.deleted ? 'deleted' : `on ${p.host ?? 'no back end'}`}`,
        );
        await removeFile(path.join(this.driver.directory, name)).catch(() => undefined);
      }
    }
  }
}
