// Hosts, services, messages, quota classes: entities and migrations.
export const adminEntities: (new (...args: never[]) => unknown)[] = [];
export const adminMigrations: (new (...args: never[]) => unknown)[] = [];
