export * from './definitions';
export * from './executions';
