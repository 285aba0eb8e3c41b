import { BackupEntity } from './backup.entity';
import { AddBackupProgress1765100000000 } from './backup-progress.migration';
import { CreateBackups1764300000000 } from './backup.migration';

export { BackupEntity } from './backup.entity';
export * from './backup.repository';
export * from './backup-start';

// Backups: entities and migrations (registered in blockStorageEntities/Migrations).
export const backupEntities: (new (...args: never[]) => unknown)[] = [BackupEntity];
export const backupMigrations: (new (...args: never[]) => unknown)[] = [
  CreateBackups1764300000000,
  AddBackupProgress1765100000000,
];
