export * from './runtime/test-runtime';
export * from './http/recording-server';
export * from './servers/describe-with-server';
export * from './messaging/test-prefix';
export { queueExists } from './messaging/leftovers';
export * from './clients/openstack-clients';
export * from './http/raw-upload';
export * from './fuzz';
export * from './servers/object-stores';
