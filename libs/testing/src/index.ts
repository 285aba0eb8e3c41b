export * from './runtime/test-runtime';
