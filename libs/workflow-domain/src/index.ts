export * from './dsl';
export * from './engine';
export * from './cron';
