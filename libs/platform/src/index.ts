export * from './tokens';
export * from './runtime';
export * from './runtime.module';
export * from './bootstrap';
export * from './app-root';
export * from './namespaced-messaging';
