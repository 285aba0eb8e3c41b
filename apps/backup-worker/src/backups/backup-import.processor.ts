import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { BACKUP_OPERATIONS, IMPORT_REQUIRED_FIELDS } from '@osc/block-storage-domain';
import { BackupRepository, QuotaRepository } from '@osc/block-storage-persistence';
import type { BackupJob } from '@osc/contracts';
import { InvalidInputError } from '@osc/errors';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import { VOLUME_BACKEND_CONFIG, type VolumeBackendConfig } from '../volume-backend/volume-backend.config';
import { VOLUME_PATHS, type VolumePaths } from '../volume-backend/volume-paths';
import { readManifest } from './backup-engine';
import { toDate } from './backup-location';
import { failureReason } from './backup-reporting';
import { BackupRestorer } from './backup-restorer';
import type { BackupStore } from './stores';

/**
 * `backup.import` (spec 7.9): the imported record's objects checked against their manifest in this
 * back end's store, then the row takes the record's fields and becomes `available`, its quota
 * reservation committed; a record that does not hold ends the import in `error`.
 */
@Injectable()
export class BackupImportProcessor {
  private readonly backups = new BackupRepository();
  private readonly quotas = new QuotaRepository();
  private readonly store: BackupStore;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_BACKEND_CONFIG) private readonly volumeBackend: VolumeBackendConfig,
    @Inject(VOLUME_PATHS) private readonly paths: VolumePaths,
    private readonly restorer: BackupRestorer,
  ) {
    this.store = restorer.store;
  }

  async import(data: BackupJob): Promise<void> {
    const b = await this.backups.findById(this.db, data.backupId, null);
    if (!b || b.status !== 'creating' || b.importRecord === null) return;
    const r = b.importRecord;
    const str = (k: string): string | null => (typeof r[k] === 'string' ? (r[k] as string) : null);
    let set: Record<string, unknown>;
    try {
      const missing = IMPORT_REQUIRED_FIELDS.filter((k) => !(k in r));
      if (missing.length > 0)
        throw new InvalidInputError(`The backup record is missing ${missing.join(', ')}.`);
      const container = str('container') ?? this.store.defaultContainer(String(r['id']));
      this.store.checkContainer(container);
      const prefix = str('service_metadata');
      if (prefix === null) throw new InvalidInputError('The backup record has no service_metadata.');
      const { objects } = await readManifest(this.store, { container, prefix });
      const uuidOrNull = (k: string): string | null => {
        const v = str(k);
        return v !== null && /^[0-9a-f-]{36}$/i.test(v) ? v : null;
      };
      const ts = str('data_timestamp');
      set = {
        volume_id: uuidOrNull('volume_id') ?? b.volumeId,
        display_name: str('display_name'),
        display_description: str('display_description'),
        container,
        service_metadata: prefix,
        object_count: objects.length,
        parent_id: uuidOrNull('parent_id'),
        snapshot_id: uuidOrNull('snapshot_id'),
        encryption_key_id: uuidOrNull('encryption_key_id'),
        metadata: typeof r['metadata'] === 'object' && r['metadata'] !== null ? r['metadata'] : {},
        service: this.store.driverId,
        availability_zone: this.volumeBackend.availabilityZone,
        host: this.paths.backend,
        import_record: null,
      };
      if (ts !== null && !Number.isNaN(toDate(ts).getTime())) set['data_timestamp'] = toDate(ts);
    } catch (err) {
      await this.db.transaction(async (em) => {
        if (
          await this.backups.transition(em, b.id, BACKUP_OPERATIONS.createFailed, this.clock.now(), {
            fail_reason: `Import failed: ${failureReason(err)}`.slice(0, 1000),
            import_record: null,
          })
        ) {
          await this.quotas.settleReservation(em, b.id, true);
        }
      });
      return;
    }
    await this.db.transaction(async (em) => {
      if (await this.backups.transition(em, b.id, BACKUP_OPERATIONS.created, this.clock.now(), set))
        await this.quotas.settleReservation(em, b.id, true);
    });
  }
}
