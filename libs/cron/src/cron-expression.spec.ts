import { cronExpression, nextCronMatch } from './cron-expression';

describe('cronExpression', () => {
  it.each([
    ['* * * * *', false, '0 * * * * *'],
    ['*/5 1 * * mon', false, '0 */5 1 * * mon'],
    ['@hourly', false, '0 0 * * * *'],
    [' @DAILY ', false, '0 0 0 * * *'],
    ['* * * * * */10', true, '*/10 * * * * *'],
  ])('reads %j (seconds field allowed: %s) as %j', (pattern, secondsField, expected) => {
    expect(cronExpression(pattern, { secondsField })).toBe(expected);
  });

  it.each([
    ['* * * * * */10', false],
    ['* * * *', true],
    ['* * * * * * *', true],
    ['H * * * *', true],
    ['61 * * * *', true],
    ['* * 31 2 *', true],
    ['* * * * $', true],
    ['', true],
  ])('refuses %j (seconds field allowed: %s)', (pattern, secondsField) => {
    expect(cronExpression(pattern, { secondsField })).toBeNull();
  });
});

describe('nextCronMatch', () => {
  it('is strictly after the given time, in UTC', () => {
    const e = cronExpression('*/15 * * * *', { secondsField: false })!;
    expect(nextCronMatch(e, new Date('2026-01-01T10:15:00.500Z')).toISOString()).toBe(
      '2026-01-01T10:30:00.000Z',
    );
    expect(nextCronMatch(e, new Date('2026-01-01T10:14:59Z')).toISOString()).toBe('2026-01-01T10:15:00.000Z');
  });
});
