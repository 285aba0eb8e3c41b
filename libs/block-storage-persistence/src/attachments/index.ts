export * from './attachment.repository';
export { attachmentMigrations } from './attachment.migration';
