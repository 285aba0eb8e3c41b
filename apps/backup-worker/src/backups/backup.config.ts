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
   * Chunks in flight per backup job (BACKUP_PIPELINE_DEPTH). A restore holds up to twice as many
   * buffers: this many compressed objects (two buffers each), or twice as many stored raw
   * (backup-reader.ts).
   */
  readonly pipelineDepth: number;
}
