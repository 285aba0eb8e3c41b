export * from './qos';
