export * from './attachment';
export * from './attachment.validation';
export * from './local-connection';
