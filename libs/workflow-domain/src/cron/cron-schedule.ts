import { cronExpression, nextCronMatch } from '@osc/cron';
import { InvalidInputError } from '@osc/errors';
import { pyJsonDumps } from '../dsl/python-text';

/**
 * Cron patterns as Mistral's croniter reads them (the reading shared with backup policies lives in
 * `@osc/cron`): five fields, or six with the seconds LAST, or a nickname; UTC. Anything else is a 400.
 */
/** A checked pattern: the text the client sent and the six-field expression cron-parser computes. */
export interface CronPattern {
  readonly pattern: string;
  readonly expression: string;
}

const invalid = (pattern: string) => new InvalidInputError(`The specified pattern is not valid: ${pattern}`);

/** Checks a cron pattern (see `@osc/cron` for what is accepted); throws InvalidInputError. */
export function parseCronPattern(pattern: string): CronPattern {
  const expression = cronExpression(pattern, { secondsField: true });
  if (expression === null) throw invalid(pattern);
  return { pattern, expression };
}

/** The first time the pattern matches strictly after `after` (whole seconds, UTC). */
export function nextCronTime(pattern: string | CronPattern, after: Date): Date {
  const p = typeof pattern === 'string' ? parseCronPattern(pattern) : pattern;
  return nextCronMatch(p.expression, after);
}

/** Mistral's `first_execution_time` text: `YYYY-MM-DD HH:MM`; seconds (`:SS`) and a `T` separator are also accepted, UTC. */
export function parseFirstExecutionTime(raw: string): Date {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?(?:\.0+)?Z?$/.exec(raw.trim());
  const bad = () =>
    new InvalidInputError(
      `Invalid input for field/attribute first_execution_time. Value: '${raw}'. time data '${raw}' does not match format '%Y-%m-%d %H:%M'`,
    );
  if (!m) throw bad();
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (
    date.getUTCFullYear() !== y ||
    date.getUTCMonth() !== mo - 1 ||
    date.getUTCDate() !== d ||
    h > 23 ||
    mi > 59 ||
    s > 59
  )
    throw bad();
  return date;
}

/** What a client asks for when creating a trigger (already type-checked). */
export interface CronTriggerRequest {
  readonly pattern?: string | null;
  readonly firstExecutionTime?: Date | null;
  readonly remainingExecutions?: number | null;
}

/** The schedule of a new trigger. */
export interface CronTriggerPlan {
  readonly pattern: string | null;
  readonly firstExecutionTime: Date | null;
  readonly nextExecutionTime: Date;
  readonly remainingExecutions: number | null;
}

/**
 * Validates a trigger's schedule and computes its first run (Mistral's rules, checked in this order):
 * a pattern or a first time is required; the first time must lie in the future (Mistral asks for one
 * minute ahead; we ask for `minLeadMs`, default 0: strictly later than `now`); without a pattern only
 * one execution is possible; a count is at least 1; the pattern must be valid. Without a first time the
 * first run is the pattern's first match after `now`; a first time alone gives a one-shot trigger.
 */
export function planCronTrigger(req: CronTriggerRequest, now: Date, minLeadMs = 0): CronTriggerPlan {
  const pattern = req.pattern ?? null;
  const first = req.firstExecutionTime ?? null;
  let count = req.remainingExecutions ?? null;
  if (!pattern && !first) throw new InvalidInputError('Pattern or first_execution_time must be specified.');
  if (count !== null && (!Number.isInteger(count) || count < 1)) {
    throw new InvalidInputError(
      `Invalid input for field/attribute remaining_executions. Value: '${count}'. Value should be at least 1`,
    );
  }
  if (first) {
    if (first.getTime() <= now.getTime() + minLeadMs) {
      throw new InvalidInputError('first_execution_time must be in the future.');
    }
    if (!pattern && count !== null && count > 1)
      throw new InvalidInputError('Pattern must be provided if count is superior to 1.');
  }
  const parsed = pattern ? parseCronPattern(pattern) : null;
  if (first && !pattern && count === null) count = 1;
  const next = first ?? nextCronTime(parsed ?? (pattern as string), now);
  return { pattern, firstExecutionTime: first, nextExecutionTime: next, remainingExecutions: count };
}

/** A trigger as the scheduler sees it when it is due. */
export interface DueCronTrigger {
  readonly pattern: string | null;
  readonly nextExecutionTime: Date;
  readonly remainingExecutions: number | null;
}

/** What firing a due trigger does to it. */
export type CronTriggerAdvance =
  | { readonly kind: 'delete' }
  | {
      readonly kind: 'advance';
      readonly nextExecutionTime: Date;
      readonly remainingExecutions: number | null;
    };

/**
 * The trigger's state after one firing at `now` (`now` ≥ its next_execution_time). The count goes down
 * by one and the trigger is deleted at 0 (or when it has no pattern: a one-shot). The next run is the
 * pattern's first match after max(scheduled time, now): a scheduler that was down fires once for the
 * whole gap and then resumes the pattern — never a burst of missed runs (Mistral computes from the
 * scheduled time, so it fires once per missed occurrence, one per polling second).
 */
export function advanceCronTrigger(t: DueCronTrigger, now: Date): CronTriggerAdvance {
  const remaining = t.remainingExecutions === null ? null : t.remainingExecutions - 1;
  if (remaining !== null && remaining <= 0) return { kind: 'delete' };
  if (!t.pattern) return { kind: 'delete' };
  const from = now.getTime() > t.nextExecutionTime.getTime() ? now : t.nextExecutionTime;
  return {
    kind: 'advance',
    nextExecutionTime: nextCronTime(t.pattern, from),
    remainingExecutions: remaining,
  };
}

/**
 * The description of an execution a trigger starts: a JSON text naming the trigger, as Mistral writes
 * it (`{"description": "...", "triggered_by": {"type": "cron_trigger", "id": ..., "name": ...}}`).
 */
export function cronTriggerExecutionDescription(trigger: {
  readonly id: string;
  readonly name: string;
}): string {
  return pyJsonDumps({
    description: `Workflow execution created by cron trigger '(${trigger.id})'.`,
    triggered_by: { type: 'cron_trigger', id: trigger.id, name: trigger.name },
  });
}
