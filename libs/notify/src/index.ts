export {
  workflowEventPayload,
  taskEventPayload,
  publishersFor,
  isKnownPublisherType,
  notifyJobFor,
  inPayloadOrder,
  type WorkflowExecutionFacts,
  type TaskExecutionFacts,
} from './events';
export {
  NoopPublisher,
  WebhookPublisher,
  AmqpPublisher,
  PermanentDeliveryError,
  eventBody,
  type NotificationPublisher,
  type NotifyEvent,
  type NotifyLogger,
  type WebhookOptions,
  type AmqpPublisherOptions,
} from './publishers';
export { NotificationDispatcher, stderrNotifyLogger, type DeliveryReport } from './notification-dispatcher';
export { NOTIFY_QUEUES, NOTIFY_QUEUE_PARTITIONS, notifyQueueOf } from './notify-queues';
