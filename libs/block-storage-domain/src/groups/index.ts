export * from './transfers';
export * from './groups';
