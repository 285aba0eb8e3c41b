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
  /** Chunks (or restored objects) in flight per job (BACKUP_PIPELINE_DEPTH). */
  readonly pipelineDepth: number;
}
