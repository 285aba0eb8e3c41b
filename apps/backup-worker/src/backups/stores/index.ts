import { PosixBackupStore } from './posix-store';
import type * as S3Store from './s3-store';
import type { S3StoreConfig } from './s3-store';
import { SwiftBackupStore, type SwiftStoreConfig } from './swift-store';
import type { BackupStore } from './backup-store';

export * from './backup-store';
export { PosixBackupStore } from './posix-store';
export type { S3StoreConfig } from './s3-store';
export { SwiftBackupStore, type SwiftStoreConfig } from './swift-store';

export interface PosixStoreConfig {
  readonly driver: 'posix';
  /** Root of the posix store (BACKUP_STORE_DIR). */
  readonly directory: string;
}

/** BACKUP_DRIVER and its settings. */
export type BackupStoreConfig = PosixStoreConfig | SwiftStoreConfig | S3StoreConfig;

/** The driver the configuration names. */
export function createBackupStore(c: BackupStoreConfig): BackupStore {
  switch (c.driver) {
    case 'posix':
      return new PosixBackupStore(c.directory);
    case 'swift':
      return new SwiftBackupStore(c);
    case 's3':
      // the AWS SDK is loaded with the first S3 store: a process on another driver (embedded mode's
      // posix store by default) never loads it (~0.15 s of an embedded start, issue #17)
      return new (require('./s3-store') as typeof S3Store).S3BackupStore(c);
  }
}
