import { CronExpressionParser } from 'cron-parser';

/**
 * Cron patterns as both schedulers of this product read them (workflow cron triggers, block-storage
 * backup policies), computed with cron-parser in UTC. One reading, so a pattern means the same in both:
 *
 * - the standard five fields `minute hour day-of-month month day-of-week`, with lists, ranges, steps,
 *   month and weekday names, `L` (last day of month) and `#` (nth weekday);
 * - when the caller allows it, a sixth field of seconds placed LAST, as Mistral's croniter reads it
 *   (`* * * * * *\/10` = every 10 seconds);
 * - croniter's nicknames `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`.
 *
 * Refused: any other field count, values out of range, a day of month that never exists in the month
 * named, and `H` (hashed) fields (croniter only accepts them with a seed Mistral never passes). Both
 * restricted day fields match on either (Vixie cron, croniter's default).
 */
const NICKNAMES: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const FIELD_CHARS = /^[0-9A-Za-z*,/#-]+$/;
const HASHED = /(^|[^A-Za-z])H([^A-Za-z]|$)/;

export interface CronReadOptions {
  /** Accept a sixth field of seconds, last (croniter's order). */
  readonly secondsField: boolean;
}

/**
 * The six-field expression (seconds first, cron-parser's order) a pattern stands for, or null when
 * the pattern is not valid. Callers turn null into their own API's error.
 */
export function cronExpression(pattern: string, options: CronReadOptions): string | null {
  const text = pattern.trim();
  const nick = NICKNAMES[text.toLowerCase()];
  let fields: string[];
  if (nick) fields = nick.split(' ');
  else {
    fields = text.split(/\s+/).filter(Boolean);
    if (fields.length !== 5 && !(options.secondsField && fields.length === 6)) return null;
    if (fields.some((f) => !FIELD_CHARS.test(f) || HASHED.test(f))) return null;
  }
  // cron-parser reads six fields with the seconds first; croniter has them last.
  const expression =
    fields.length === 6 ? [fields[5], ...fields.slice(0, 5)].join(' ') : ['0', ...fields].join(' ');
  try {
    CronExpressionParser.parse(expression, { currentDate: new Date(0), tz: 'UTC', strict: false }).next();
  } catch {
    return null;
  }
  return expression;
}

/** The first time a checked expression (from {@link cronExpression}) matches strictly after `after` (whole seconds, UTC). */
export function nextCronMatch(expression: string, after: Date): Date {
  const from = new Date(Math.floor(after.getTime() / 1000) * 1000);
  return CronExpressionParser.parse(expression, { currentDate: from, tz: 'UTC', strict: false })
    .next()
    .toDate();
}
