export { type CronReadOptions, cronExpression, nextCronMatch } from './cron-expression';
