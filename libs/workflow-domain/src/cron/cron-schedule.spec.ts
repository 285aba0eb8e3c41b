import { InvalidInputError } from '@osc/errors';
import {
  advanceCronTrigger,
  cronTriggerExecutionDescription,
  nextCronTime,
  parseCronPattern,
  parseFirstExecutionTime,
  planCronTrigger,
} from './cron-schedule';

const t = (iso: string) => new Date(iso);

describe('parseCronPattern', () => {
  it.each([
    ['*/5 * * * *', '0 */5 * * * *'],
    ['0 8 * * 1-5', '0 0 8 * * 1-5'],
    ['  15 3 1,15 JAN,JUL sun  ', '0 15 3 1,15 JAN,JUL sun'],
    ['* * * * * */10', '*/10 * * * * *'],
    ['@daily', '0 0 0 * * *'],
    ['@HOURLY', '0 0 * * * *'],
    ['@midnight', '0 0 0 * * *'],
    ['0 0 L * *', '0 0 0 L * *'],
    ['0 0 * * MON#2', '0 0 0 * * MON#2'],
  ])('accepts %p', (pattern, expression) => {
    expect(parseCronPattern(pattern)).toEqual({ pattern, expression });
  });

  it.each([
    '',
    '* * *',
    '* * * *',
    '* * * * * * *',
    '60 * * * *',
    '* 24 * * *',
    '* * 32 * *',
    '* * * 13 *',
    '* * * * 8',
    'H * * * *',
    '0 0 30 2 *',
    '@reboot',
    '@every 5m',
    '*/0 * * * *',
    '$ * * * *',
    'a b c d e',
  ])('refuses %p', (pattern) => {
    expect(() => parseCronPattern(pattern)).toThrow(
      new InvalidInputError(`The specified pattern is not valid: ${pattern}`),
    );
  });
});

describe('nextCronTime', () => {
  it.each([
    ['*/5 * * * *', '2026-01-01T00:00:30Z', '2026-01-01T00:05:00.000Z'],
    ['*/5 * * * *', '2026-01-01T00:05:00Z', '2026-01-01T00:10:00.000Z'],
    ['*/5 * * * *', '2026-01-01T00:04:59.999Z', '2026-01-01T00:05:00.000Z'],
    ['0 8 * * *', '2026-01-01T08:00:00.500Z', '2026-01-02T08:00:00.000Z'],
    ['* * * * * */10', '2026-01-01T00:00:10Z', '2026-01-01T00:00:20.000Z'],
    ['0 0 29 2 *', '2026-03-01T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['0 0 1 * 1', '2026-01-01T00:00:00Z', '2026-01-05T00:00:00.000Z'],
  ])('%p after %p is %p', (pattern, after, expected) => {
    expect(nextCronTime(pattern, t(after)).toISOString()).toBe(expected);
  });
});

describe('parseFirstExecutionTime', () => {
  it.each([
    ['4242-12-25 13:37', '4242-12-25T13:37:00.000Z'],
    ['4242-12-25 13:37:05', '4242-12-25T13:37:05.000Z'],
    ['2030-01-02T03:04:05Z', '2030-01-02T03:04:05.000Z'],
  ])('reads %p', (raw, iso) => expect(parseFirstExecutionTime(raw).toISOString()).toBe(iso));

  it.each(['tomorrow', '2030-02-30 10:00', '2030-01-01', '2030-01-01 25:00', '2030-13-01 10:00'])(
    'refuses %p',
    (raw) => {
      expect(() => parseFirstExecutionTime(raw)).toThrow(InvalidInputError);
    },
  );
});

describe('planCronTrigger', () => {
  const now = t('2026-06-01T12:00:10Z');

  it('runs a pattern trigger at its first match after now', () => {
    expect(planCronTrigger({ pattern: '*/5 * * * *' }, now)).toEqual({
      pattern: '*/5 * * * *',
      firstExecutionTime: null,
      nextExecutionTime: t('2026-06-01T12:05:00Z'),
      remainingExecutions: null,
    });
  });

  it('makes a first time alone a one-shot trigger due at that time', () => {
    const first = t('4242-12-25T13:37:00Z');
    expect(planCronTrigger({ firstExecutionTime: first }, now)).toEqual({
      pattern: null,
      firstExecutionTime: first,
      nextExecutionTime: first,
      remainingExecutions: 1,
    });
  });

  it('starts a pattern trigger with a first time at the first time', () => {
    const first = t('2026-06-01T12:00:11Z');
    expect(
      planCronTrigger({ pattern: '@daily', firstExecutionTime: first, remainingExecutions: 3 }, now),
    ).toMatchObject({
      nextExecutionTime: first,
      remainingExecutions: 3,
    });
  });

  it.each([
    [{}, 'Pattern or first_execution_time must be specified.'],
    [{ remainingExecutions: 3 }, 'Pattern or first_execution_time must be specified.'],
    [{ firstExecutionTime: now }, 'first_execution_time must be in the future.'],
    [
      { firstExecutionTime: t('2020-01-01T00:00:00Z'), pattern: '* * * * *' },
      'first_execution_time must be in the future.',
    ],
    [
      { firstExecutionTime: t('2030-01-01T00:00:00Z'), remainingExecutions: 2 },
      'Pattern must be provided if count is superior to 1.',
    ],
    [
      { pattern: '* * * * *', remainingExecutions: 0 },
      "Invalid input for field/attribute remaining_executions. Value: '0'. Value should be at least 1",
    ],
    [
      { pattern: '* * * * *', remainingExecutions: -3 },
      "Invalid input for field/attribute remaining_executions. Value: '-3'. Value should be at least 1",
    ],
    [{ pattern: '61 * * * *' }, 'The specified pattern is not valid: 61 * * * *'],
  ])('refuses %p', (req, message) => {
    expect(() => planCronTrigger(req, now)).toThrow(new InvalidInputError(message));
  });

  it('applies a minimum lead for the first time', () => {
    expect(() => planCronTrigger({ firstExecutionTime: t('2026-06-01T12:00:40Z') }, now, 60_000)).toThrow(
      InvalidInputError,
    );
  });
});

describe('advanceCronTrigger', () => {
  const due = {
    pattern: '*/5 * * * *',
    nextExecutionTime: t('2026-01-01T00:05:00Z'),
    remainingExecutions: null,
  };

  it('moves an endless trigger to its next match', () => {
    expect(advanceCronTrigger(due, t('2026-01-01T00:05:00.300Z'))).toEqual({
      kind: 'advance',
      nextExecutionTime: t('2026-01-01T00:10:00Z'),
      remainingExecutions: null,
    });
  });

  it('counts down and deletes at zero', () => {
    expect(advanceCronTrigger({ ...due, remainingExecutions: 2 }, t('2026-01-01T00:05:01Z'))).toMatchObject({
      kind: 'advance',
      remainingExecutions: 1,
    });
    expect(advanceCronTrigger({ ...due, remainingExecutions: 1 }, t('2026-01-01T00:05:01Z'))).toEqual({
      kind: 'delete',
    });
  });

  it('deletes a one-shot trigger', () => {
    expect(
      advanceCronTrigger(
        { pattern: null, nextExecutionTime: due.nextExecutionTime, remainingExecutions: 1 },
        t('2026-01-01T00:05:00Z'),
      ),
    ).toEqual({
      kind: 'delete',
    });
  });

  it('fires once after downtime and resumes after now, not at the missed times', () => {
    expect(advanceCronTrigger(due, t('2026-01-01T03:17:42Z'))).toEqual({
      kind: 'advance',
      nextExecutionTime: t('2026-01-01T03:20:00Z'),
      remainingExecutions: null,
    });
  });

  it('never schedules the next run at or before the one just fired', () => {
    const next = advanceCronTrigger({ ...due, pattern: '* * * * * *' }, t('2026-01-01T00:04:59Z'));
    expect(next).toEqual({
      kind: 'advance',
      nextExecutionTime: t('2026-01-01T00:05:01Z'),
      remainingExecutions: null,
    });
  });
});

describe('cronTriggerExecutionDescription', () => {
  it('is the JSON text Mistral writes', () => {
    expect(cronTriggerExecutionDescription({ id: 'abc', name: 'n"1' })).toBe(
      '{"description": "Workflow execution created by cron trigger \'(abc)\'.", "triggered_by": {"type": "cron_trigger", "id": "abc", "name": "n\\"1"}}',
    );
  });
});
