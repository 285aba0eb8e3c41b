export * from './definitions';
export * from './lists';
export * from './executions';
export * from './cron';
export * from './event-triggers';
export * from './environments';
export * from './reconciliation';
export * from './dynamic-actions';
