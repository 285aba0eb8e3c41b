export * from './sql';
export * from './block-storage.entities';
export * from './block-storage.migration';
export * from './volume.repository';
export * from './volume-type.repository';
export * from './quota.repository';
export * from './backups';
export * from './groups';
