export * from './definitions';
export * from './executions';
export * from './cron';
