export {
  type CommandBus,
  type CommandMessage,
  type CommandHandler,
  type ConsumeOptions,
  type DeliveryInfo,
  type Subscription,
  type DeadLetterReason,
  DEFAULT_MAX_DELIVERIES,
  DEFAULT_PREFETCH,
  DEFAULT_RETRY_DELAY_MS,
  POISON_TYPE,
  deadLetterQueueOf,
  isDeadLetterQueue,
} from './command-bus';
export {
  type JobQueue,
  type Job,
  type NewJob,
  type JobHandler,
  type ProcessOptions,
  type Worker,
  type BackoffType,
} from './job-queue';
export { isRetryableError } from './retryable';
export { type MessagingLogger } from './logger';
export { InProcessCommandBus, type InProcessCommandBusOptions } from './in-process-command-bus';
export {
  RabbitMqCommandBus,
  type RabbitMqCommandBusOptions,
  amqpConnectionOptions,
} from './rabbitmq-command-bus';
export { InProcessJobQueue, type InProcessJobQueueOptions } from './in-process-job-queue';
export { BullMqJobQueue, type BullMqJobQueueOptions } from './bullmq-job-queue';
export { OutboxEntity, outboxEntities, type OutboxDestination } from './outbox/outbox.entity';
export { messagingMigrations, CreateOutbox1763856000000 } from './outbox/outbox.migration';
export { OutboxWriter, type OutboxItem, type HandedOffRow } from './outbox/outbox-writer';
export { OutboxRelay, type OutboxRelayOptions } from './outbox/outbox-relay';
export { PublishedRows } from './outbox/published-rows';
export { createMessaging, type Messaging, type MessagingConfig } from './create-messaging';
export { type AfterCommit } from './command-bus';
export { MessageJournal, type JournalEntry, type JournalChange } from './journal/message-journal';
export { CreateMessageJournal1765000000000 } from './journal/message-journal.migration';
export { tracedBus, tracedJobs, withTraceHeaders, withTraceData } from './tracing';
export { meterMessaging, type Metered } from './metered';
