// Backups: entities and migrations (filled by the backups work; registered in blockStorageEntities/Migrations).
export const backupEntities: (new (...args: never[]) => unknown)[] = [];
export const backupMigrations: (new (...args: never[]) => unknown)[] = [];
