import { isAppError } from '@osc/errors';

/**
 * Decides, once for every worker in the product, whether a failure is worth another attempt.
 *
 * - An `AppError` says so itself (`retryable`: `TransientError` yes, `InvalidInputError` no).
 * - Any other error that carries a boolean `retryable` property is taken at its word.
 * - Anything else (a driver's socket error, a `TypeError`) is unclassified and treated as
 *   retryable: the attempt bound (`maxDeliveries`, `attempts`) still stops it, and a database or
 *   network blip must not lose an engine command.
 */
export function isRetryableError(error: unknown): boolean {
  if (isAppError(error)) return error.retryable;
  if (typeof error === 'object' && error !== null && 'retryable' in error) {
    const flag = (error as { retryable: unknown }).retryable;
    if (typeof flag === 'boolean') return flag;
  }
  return true;
}

/** A short, secret-free description of a failure for dead-letter headers and logs. */
export function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}
