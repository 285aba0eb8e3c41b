export {
  EventTriggerEntity,
  EventTriggerNotificationEntity,
  eventTriggerEntities,
} from './event-trigger.entity';
export { CreateEventTriggers1764310000000, eventTriggerMigrations } from './event-triggers.migration';
export { workflowEventTriggersSchema } from './event-triggers.schema';
export {
  type EventSqlRunner,
  type EventTriggerRecord,
  type NewEventTrigger,
  type EventTriggerChanges,
  toEventTrigger,
  insertEventTrigger,
  findEventTrigger,
  updateEventTrigger,
  deleteEventTrigger,
  eventTriggerIdsOfWorkflow,
  eventTriggerSources,
  eventTriggersFor,
  claimNotification,
  pruneNotifications,
} from './event-trigger-store';
