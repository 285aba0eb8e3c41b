export * from './transfers';
export * from './groups';
export * from './group-rules';
