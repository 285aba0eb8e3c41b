/**
 * The one error hierarchy of the product. Domain code throws these; each HTTP edge maps `kind`
 * to its own wire format exactly once (Mistral's faultstring body, Cinder's named fault body).
 * Workers use `retryable` to choose between retry with backoff and giving up.
 */
export const ERROR_KINDS = [
  'invalid',
  'unauthorized',
  'forbidden',
  'not-found',
  'not-acceptable',
  'conflict',
  'unsupported-media-type',
  'over-limit',
  'not-implemented',
  'unavailable',
  'internal',
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export abstract class AppError extends Error {
  abstract readonly kind: ErrorKind;
  readonly retryable: boolean = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad input: syntax, types, values or a rule of the API. HTTP 400. */
export class InvalidInputError extends AppError {
  readonly kind = 'invalid';
}

/** A transition the state machine does not allow from the current state. HTTP 400 (Cinder) / 400 (Mistral). */
export class InvalidStateError extends AppError {
  readonly kind = 'invalid';
}

export class UnauthorizedError extends AppError {
  readonly kind = 'unauthorized';
}

export class ForbiddenError extends AppError {
  readonly kind = 'forbidden';
}

/** `resource` names the kind of thing (e.g. `Workflow`), `id` how it was asked for. */
export class NotFoundError extends AppError {
  readonly kind = 'not-found';
  constructor(
    readonly resource: string,
    readonly id: string,
    message?: string,
  ) {
    super(message ?? `${resource} ${id} not found`);
  }
}

export class NotAcceptableError extends AppError {
  readonly kind = 'not-acceptable';
}

/** Duplicate names, resources in use, concurrent modification. HTTP 409. */
export class ConflictError extends AppError {
  readonly kind = 'conflict';
}

export class UnsupportedMediaTypeError extends AppError {
  readonly kind = 'unsupported-media-type';
}

/** Quota exceeded or rate limited. HTTP 413 (Cinder). `retryAfter` in seconds when known. */
export class OverLimitError extends AppError {
  readonly kind = 'over-limit';
  constructor(
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export class NotImplementedError extends AppError {
  readonly kind = 'not-implemented';
}

/** A dependency (database, broker, identity service) is unreachable; worth retrying. */
export class TransientError extends AppError {
  readonly kind = 'unavailable';
  override readonly retryable: boolean = true;
}

/** A broken invariant inside the product; never caused by input. */
export class InternalError extends AppError {
  readonly kind = 'internal';
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** HTTP status for each kind; both services share it, only the body differs. */
export const HTTP_STATUS_BY_KIND: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  'not-found': 404,
  'not-acceptable': 406,
  conflict: 409,
  'unsupported-media-type': 415,
  'over-limit': 413,
  'not-implemented': 501,
  unavailable: 503,
  internal: 500,
};
