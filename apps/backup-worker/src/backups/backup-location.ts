import { backupObjectPrefix } from '@osc/block-storage-domain';
import type { StoredBackup } from '@osc/block-storage-persistence';
import type { BackupLocation } from './backup-engine';
import type { BackupStore } from './stores';

/** Stored wire timestamps (`YYYY-MM-DDTHH:MM:SS.ffffff`, UTC) back to dates. */
export const toDate = (t: Date | string): Date => (t instanceof Date ? t : new Date(`${t}Z`));

/**
 * Where a create writes the backup's objects in `store`: its container (the store's default when
 * the request named none) and the object prefix named after its volume, zone and creation time.
 * A delete of a backup that never finished cleans up the same place.
 */
export const createLocation = (store: BackupStore, b: StoredBackup): BackupLocation => ({
  container: b.container ?? store.defaultContainer(b.id),
  prefix: backupObjectPrefix(store.kind, {
    volumeId: b.volumeId,
    backupId: b.id,
    availabilityZone: b.availabilityZone,
    at: toDate(b.createdAt),
  }),
});
