// AppError: the one error type services and adapters throw; the HTTP layer renders it as the DESIGN §5 body.
import { ERROR_CATALOG, type ErrorCode } from './catalog.js';

export interface ErrorDetail {
  field: string;
  message: string;
  value?: unknown;
}

/** An authentication challenge (RFC 9110 §11.6.1): `Bearer realm="canon", error="invalid_token"`. */
export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/**
 * What a client needs to know besides the code, as facts: the HTTP layer turns them into headers
 * (WWW-Authenticate, Retry-After, X-RateLimit-*, Set-Cookie), and another transport into what it has.
 */
export interface ErrorFacts {
  /** The schemes the client may authenticate with, and why this attempt failed. */
  challenges?: Challenge[];
  /** Seconds after which the same request may succeed. */
  retryAfterSeconds?: number;
  /** The limit the request counted against: its size, what is left, and when it resets (Unix seconds). */
  rateLimit?: { limit: number; remaining: number; resetAt: number };
  /** Cookies the client holds that no longer mean anything (an ended session), by name. */
  clearCookies?: string[];
  /** The details already name fields as the request's API version does (an older version's body check): not translated again. */
  fieldsInVersion?: boolean;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly facts: ErrorFacts;
  /** Response headers only the HTTP layer itself knows (Allow, Accept-Encoding); services state facts instead. */
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetail[]; headers?: Record<string, string>; facts?: ErrorFacts } = {}) {
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
    this.facts = options.facts ?? {};
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
