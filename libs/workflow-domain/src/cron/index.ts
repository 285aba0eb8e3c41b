export {
  type CronPattern,
  type CronTriggerRequest,
  type CronTriggerPlan,
  type DueCronTrigger,
  type CronTriggerAdvance,
  parseCronPattern,
  nextCronTime,
  parseFirstExecutionTime,
  planCronTrigger,
  advanceCronTrigger,
  cronTriggerExecutionDescription,
} from './cron-schedule';
