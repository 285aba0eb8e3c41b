export * from './workflow/queues';
export * from './workflow/engine-commands';
export * from './workflow/action-jobs';
export * from './workflow/notify';
export * from './block-storage/volume-commands';
export * from './block-storage/backup-jobs';
export * from './jobs';
