/**
 * Where a volume's and a snapshot's bytes are, for the backup engine (create reads them, restore
 * writes them). The file volume driver provides it; the backup side never reaches into the back
 * end's services for paths.
 */
export interface VolumePaths {
  /** `host@backend` whose bytes these are (the backup queue and the backups' host). */
  readonly backend: string;
  volumeFile(volumeId: string): string;
  snapshotFile(snapshotId: string): string;
}

/** DI token of the {@link VolumePaths} of this worker's back end. */
export const VOLUME_PATHS = Symbol('VOLUME_PATHS');
