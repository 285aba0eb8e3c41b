import {
  ConflictError,
  ERROR_KINDS,
  HTTP_STATUS_BY_KIND,
  NotFoundError,
  TransientError,
  isAppError,
} from './app-error';

describe('errors', () => {
  it('maps every kind to an HTTP status', () => {
    for (const kind of ERROR_KINDS) expect(HTTP_STATUS_BY_KIND[kind]).toBeGreaterThanOrEqual(400);
  });
  it('names the resource in not-found errors', () => {
    const e = new NotFoundError('Volume', 'abc');
    expect(e.message).toBe('Volume abc not found');
    expect(e.kind).toBe('not-found');
    expect(e.name).toBe('NotFoundError');
    expect(isAppError(e)).toBe(true);
  });
  it('marks only transient errors retryable', () => {
    expect(new TransientError('db down').retryable).toBe(true);
    expect(new ConflictError('dup').retryable).toBe(false);
    expect(isAppError(new Error('x'))).toBe(false);
  });
});
