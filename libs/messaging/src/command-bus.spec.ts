import { InvalidInputError, InvalidStateError, NotFoundError, TransientError } from '@osc/errors';
import {
  assertQueueName,
  decodeCommand,
  encodeCommand,
  normalizeConsumeOptions,
  retryDelay,
} from './command-bus';
import { backoffDelay, normalizeJob } from './job-queue';
import { isRetryableError } from './retryable';

describe('isRetryableError', () => {
  it.each([
    ['TransientError', new TransientError('db down'), true],
    ['InvalidInputError', new InvalidInputError('bad'), false],
    ['InvalidStateError', new InvalidStateError('bad state'), false],
    ['NotFoundError', new NotFoundError('Workflow', 'wf'), false],
    ['plain Error (unclassified)', new Error('ECONNRESET'), true],
    ['object saying retryable false', Object.assign(new Error('x'), { retryable: false }), false],
    ['object saying retryable true', { retryable: true }, true],
    ['a string', 'boom', true],
  ])('%s → %s', (_name, error, expected) => {
    expect(isRetryableError(error)).toBe(expected);
  });
});

describe('command envelope', () => {
  it('round-trips a message body', () => {
    const body = encodeCommand({ id: 'a', type: 't.x', payload: { n: [1, 2] }, headers: { h: 'v' } });
    expect(decodeCommand(body)).toEqual({ id: 'a', type: 't.x', payload: { n: [1, 2] } });
  });
  it('stores an undefined payload as null', () => {
    expect(decodeCommand(encodeCommand({ id: 'a', type: 't', payload: undefined }))).toEqual({
      id: 'a',
      type: 't',
      payload: null,
    });
  });
  it.each([
    '',
    'not json',
    '[]',
    'null',
    '{"id":"a","type":"t"}',
    '{"id":"","type":"t","payload":1}',
    '{"id":1,"type":"t","payload":1}',
  ])('treats %j as poison', (text) => expect(decodeCommand(text)).toBeUndefined());
  it('rejects non-string headers', () => {
    expect(() =>
      encodeCommand({ id: 'a', type: 't', payload: 1, headers: { n: 1 as unknown as string } }),
    ).toThrow(InvalidInputError);
  });
  it.each(['', 'a b', 'a:b', '.x', 'x'.repeat(201)])('rejects queue name %j', (name) => {
    expect(() => assertQueueName(name)).toThrow(InvalidInputError);
  });
  it.each(['engine', 'engine.commands', 'a-b_c.1'])('accepts queue name %j', (name) => {
    expect(() => assertQueueName(name)).not.toThrow();
  });
  it('fills consume defaults and rejects bad values', () => {
    expect(normalizeConsumeOptions(undefined)).toEqual({ prefetch: 20, maxDeliveries: 5, retryDelayMs: 250 });
    expect(() => normalizeConsumeOptions({ retryDelayMs: -1 })).toThrow(InvalidInputError);
    expect(() => normalizeConsumeOptions({ maxDeliveries: 0 })).toThrow(InvalidInputError);
    expect(() => normalizeConsumeOptions({ prefetch: 1.5 })).toThrow(InvalidInputError);
  });
});

describe('retryDelay', () => {
  it('doubles per delivery and is capped at 30 s', () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(250, n))).toEqual([250, 500, 1000, 2000]);
    expect(retryDelay(250, 20)).toBe(30_000);
    expect(retryDelay(0, 3)).toBe(0);
  });
});

describe('jobs', () => {
  it('computes backoff like BullMQ', () => {
    expect([1, 2, 3].map((n) => backoffDelay({ type: 'fixed', delayMs: 100 }, n))).toEqual([100, 100, 100]);
    expect([1, 2, 3, 4].map((n) => backoffDelay({ type: 'exponential', delayMs: 100 }, n))).toEqual([
      100, 200, 400, 800,
    ]);
    expect(backoffDelay(undefined, 3)).toBe(0);
  });
  it('fills job defaults', () => {
    expect(normalizeJob('q', { name: 'n', data: undefined })).toEqual({
      id: undefined,
      name: 'n',
      data: null,
      delayMs: 0,
      attempts: 1,
      backoff: undefined,
    });
  });
  it('rejects data that is not JSON-serializable', () => {
    expect(() => normalizeJob('q', { name: 'n', data: { big: BigInt(1) } })).toThrow(InvalidInputError);
  });
});
