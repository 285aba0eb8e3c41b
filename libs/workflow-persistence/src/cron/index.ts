export { CronTriggerEntity, cronTriggerEntities } from './cron-trigger.entity';
export { CreateCronTriggers1764000000000, cronTriggerMigrations } from './cron-triggers.migration';
export { workflowCronTriggersSchema } from './cron-triggers.schema';
export {
  type CronSqlRunner,
  type CronTriggerRecord,
  type NewCronTrigger,
  type CronTriggerUpdate,
  toCronTrigger,
  insertCronTrigger,
  findCronTrigger,
  deleteCronTrigger,
  cronTriggerNamesOfWorkflow,
  claimDueCronTriggers,
  applyCronTriggerUpdates,
  earliestCronTriggerTime,
  type TriggerWorkflow,
  loadTriggerWorkflows,
} from './cron-trigger-store';
