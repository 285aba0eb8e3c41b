export * from './reconcile.repository';
export * from './settlements';
export { reconcileMigrations } from './reconcile.migration';
