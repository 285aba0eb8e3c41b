/** Command bus queue of the workflow engine (all `engine.*` commands). */
export const ENGINE_COMMAND_QUEUE = 'workflow.engine';

/** Job queue of action runs (executor workers). */
export const ACTION_JOB_QUEUE = 'workflow.actions';
/** Job name of an action run; data is an `ActionRunJob`, job id the action execution id. */
export const ACTION_RUN_JOB = 'action.run';
/**
 * Job name of several action runs of one with-items task decided together; data is an
 * `ActionRunBatchJob`, job id `batch-<first action execution id>`. Each run is claimed and reported
 * on its own, as if it were an {@link ACTION_RUN_JOB}.
 */
export const ACTION_RUN_BATCH_JOB = 'action.run-batch';

/** Job queue of engine timers (delayed jobs; data is a `TimerFiredPayload`, job id the timer id). */
export const ENGINE_TIMER_QUEUE = 'workflow.timers';
export const TIMER_FIRED_JOB = 'engine.timer-fired';

/** Job queue of notification deliveries (issue 7; data is a `NotifyJob`). */
export const NOTIFY_JOB_QUEUE = 'workflow.notify';
export const NOTIFY_DELIVER_JOB = 'notify.deliver';
