// The client's typed exceptions: CanonError for an error answer (DESIGN §7 "Client (contract)"; the body is the uniform error object of spec §7), and the failures that are not answers (the network, an asynchronous operation).

/** The uniform error body's `error` member, as Canon renders it (docs/errors.md). */
export interface ErrorObject {
  code: string;
  message: string;
  details?: unknown;
  request_id?: string;
}

/** Facts about how an answer was reached that are not in its body. */
export interface ErrorContext {
  /** Tries made, the first included (retries are described in packages/client/README.md). */
  attempts?: number;
  /** The wait the answer's `Retry-After` asked for (RFC 9110 §10.2.3), in milliseconds, when it had one. */
  retryAfterMs?: number;
}

/** Thrown for every error answer (4xx/5xx) the client does not retry or has stopped retrying. */
export class CanonError extends Error {
  override readonly name = 'CanonError';
  /** The HTTP status code of the answer. */
  readonly status: number;
  /** The machine-readable code (docs/errors.md), e.g. `VALIDATION_ERROR`; for the token endpoint the RFC 6749 §5.2 code (`invalid_client`). */
  readonly code: string;
  /** Per-field problems and other structured facts, as the server sent them. */
  readonly details: unknown;
  /** The server's request id (`X-Request-Id`, or the body's `request_id`): quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** Tries made before this answer was given up on (1 when it was not retried). */
  readonly attempts: number;
  /** What the answer's `Retry-After` asked for, in milliseconds (429 and 503 carry it). */
  readonly retryAfterMs: number | undefined;

  constructor(status: number, error: ErrorObject, requestId?: string, context: ErrorContext = {}) {
    super(error.message);
    this.status = status;
    this.code = error.code;
    this.details = error.details;
    this.requestId = error.request_id ?? requestId;
    this.attempts = context.attempts ?? 1;
    this.retryAfterMs = context.retryAfterMs;
  }
}

/** Thrown when no answer came at all: every attempt failed at the network level (refused, reset, timed out). */
export class CanonNetworkError extends Error {
  override readonly name = 'CanonNetworkError';
  /** Tries made, the first included. */
  readonly attempts: number;

  constructor(message: string, attempts: number, cause: unknown) {
    super(message, { cause });
    this.attempts = attempts;
  }
}

/** Thrown by an operation's `done()` when the operation ended `failed` (DESIGN §9: a declined payment). */
export class OperationFailedError extends Error {
  override readonly name = 'OperationFailedError';
  /** Where the operation's state was read (the 202's `Location`). */
  readonly location: string;
  /** The final state as the server rendered it (`{status: "failed", error, …}`). */
  readonly result: unknown;

  constructor(location: string, result: unknown, reason: string | undefined) {
    super(reason ? `The operation at ${location} failed: ${reason}` : `The operation at ${location} failed.`);
    this.location = location;
    this.result = result;
  }
}

/** Thrown by an operation's `done({ timeout })` when the operation is still in flight at the deadline; it may still finish. */
export class OperationTimeoutError extends Error {
  override readonly name = 'OperationTimeoutError';
  readonly location: string;
  /** The last state read (`{status: "processing", …}`). */
  readonly last: unknown;

  constructor(location: string, timeoutMs: number, last: unknown) {
    super(`The operation at ${location} was still in flight after ${timeoutMs} ms.`);
    this.location = location;
    this.last = last;
  }
}
