// CanonError: an error answer of a Canon API as a typed exception (DESIGN §7 "Client (contract)"; the body is the uniform error object of spec §7).

/** The uniform error body's `error` member, as Canon renders it (docs/errors.md). */
export interface ErrorObject {
  code: string;
  message: string;
  details?: unknown;
  request_id?: string;
}

/** Thrown for every error answer (4xx/5xx) the client does not retry or has stopped retrying. */
export class CanonError extends Error {
  override readonly name = 'CanonError';
  /** The HTTP status code of the answer. */
  readonly status: number;
  /** The machine-readable code (docs/errors.md), e.g. `VALIDATION_FAILED`. */
  readonly code: string;
  /** Per-field problems and other structured facts, as the server sent them. */
  readonly details: unknown;
  /** The server's request id (`X-Request-Id`, or the body's `request_id`): quote it when reporting a problem. */
  readonly requestId: string | undefined;

  constructor(status: number, error: ErrorObject, requestId?: string) {
    super(error.message);
    this.status = status;
    this.code = error.code;
    this.details = error.details;
    this.requestId = error.request_id ?? requestId;
  }
}
