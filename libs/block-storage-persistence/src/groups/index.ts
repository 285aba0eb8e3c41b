// Volume transfers, consistency groups, generic groups and group types: entities and migrations.
export const groupEntities: (new (...args: never[]) => unknown)[] = [];
export const groupMigrations: (new (...args: never[]) => unknown)[] = [];
