// AppError: the one error type services and adapters throw; the HTTP layer renders it as the DESIGN §5 body.
import { ERROR_CATALOG, type ErrorCode } from './catalog.js';

export interface ErrorDetail {
  field: string;
  message: string;
  value?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  /** Extra response headers the error needs (Allow, WWW-Authenticate, Retry-After). */
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    // Catalogued errors are answers, not bugs: no stack trace is captured (it costs more than the rest of a 4xx).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.details = options.details;
    this.headers = options.headers;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
