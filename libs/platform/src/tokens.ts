/** DI tokens for the shared runtime pieces every app receives from RuntimeModule. */
export const DATA_SOURCE = Symbol('DATA_SOURCE');
export const COMMAND_BUS = Symbol('COMMAND_BUS');
export const JOB_QUEUE = Symbol('JOB_QUEUE');
export const OUTBOX_WRITER = Symbol('OUTBOX_WRITER');
export const CLOCK = Symbol('CLOCK');
export const RUNTIME = Symbol('RUNTIME');

/** The clock services use; tests replace it. Domain code receives `now` as an argument. */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };
