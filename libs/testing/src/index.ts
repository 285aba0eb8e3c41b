export * from './runtime/test-runtime';
export * from './http/recording-server';
