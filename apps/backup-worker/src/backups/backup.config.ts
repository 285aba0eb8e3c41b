import type { BackupStoreConfig } from './stores';

/** DI token and shape of the backup engine's configuration (validated in `config.ts`). */
export const BACKUP_CONFIG = Symbol('BACKUP_CONFIG');

export interface BackupConfig {
  /** BACKUP_DRIVER and its settings. */
  readonly store: BackupStoreConfig;
  readonly chunkSize: number;
  readonly blockSize: number;
  readonly compression: string;
  readonly concurrency: number;
  /**
   * Chunks in flight per backup job (BACKUP_PIPELINE_DEPTH); a restore holds as many objects' worth
   * of buffers, twice that many objects when they are stored raw (backup-reader.ts).
   */
  readonly pipelineDepth: number;
}
