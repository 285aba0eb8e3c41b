/**
 * Codes of failures raised before any statement ran: PostgreSQL refused the connection (too many
 * clients, still starting up, cannot connect) or nothing listened. Retrying a call that failed so
 * cannot apply anything twice — unlike a connection lost mid-statement, which may have committed.
 */
const REFUSALS = new Set(['53300', '57P03', '08001', '08004', 'ECONNREFUSED']);

const codeOf = (e: unknown): string | undefined =>
  typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string'
    ? (e as { code: string }).code
    : undefined;

/** Whether `error` (or the driver error TypeORM wraps in it) is a connection refusal. */
export function isConnectionRefusal(error: unknown): boolean {
  const wrapped =
    typeof error === 'object' && error !== null
      ? (error as { driverError?: unknown }).driverError
      : undefined;
  return [codeOf(error), codeOf(wrapped)].some((c) => c !== undefined && REFUSALS.has(c));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn`; while it fails with an error `retryable` accepts, waits the next of `delaysMs` and runs it
 * again. Any other failure, or one after the last delay, is thrown as it came.
 */
export async function retryAfter<T>(
  fn: () => Promise<T>,
  delaysMs: readonly number[],
  retryable: (error: unknown) => boolean = () => true,
  wait: (ms: number) => Promise<void> = sleep,
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await fn();
    } catch (e) {
      const delay = delaysMs[attempt];
      if (delay === undefined || !retryable(e)) throw e;
      await wait(delay);
    }
  }
}

/**
 * Runs `fn`; while it fails with a connection refusal, waits the next of `delaysMs` and runs it again.
 * Any other failure, or a refusal after the last delay, is thrown as it came.
 */
export function retryConnectionRefusals<T>(
  fn: () => Promise<T>,
  delaysMs: readonly number[] = [250, 500, 1_000, 2_000, 4_000],
  wait: (ms: number) => Promise<void> = sleep,
): Promise<T> {
  return retryAfter(fn, delaysMs, isConnectionRefusal, wait);
}
