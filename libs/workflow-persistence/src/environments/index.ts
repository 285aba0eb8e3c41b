export { EnvironmentEntity, environmentEntities } from './environment.entity';
export { CreateEnvironments1764420000000, environmentMigrations } from './environments.migration';
export { workflowEnvironmentsSchema } from './environments.schema';
export {
  type EnvironmentSqlRunner,
  type EnvironmentRecord,
  type NewEnvironment,
  type EnvironmentChanges,
  toEnvironment,
  insertEnvironment,
  findEnvironment,
  updateEnvironment,
  deleteEnvironment,
  resolveNamedEnvironment,
} from './environment-store';
