// The DESIGN §5 error body, and the mapping of Fastify's and Node's own failures onto the catalog.
import { AppError } from '../../errors/app-error.js';
import { StoreBusy } from '../../store/types.js';
import type { CookieNames } from '../../auth/session-cookies.js';
import { factHeaders } from './error-facts.js';
import { JSON_CONTENT_TYPE } from '../transport/negotiate.js';

export interface ErrorBody {
  error: {
    code: string;
    message: string;
    details?: Array<{ field: string; message: string; value?: unknown }>;
    /** How many details were left out past the first MAX_DETAILS. */
    details_omitted?: number;
    timestamp: string;
    request_id: string;
  };
}

/** An error names at most this many problems: 50,000 unknown keys must not make a 3 MB answer. */
export const MAX_DETAILS = 100;

export function errorBody(err: AppError, requestId: string): ErrorBody {
  const details = err.details;
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(details ? { details: details.length > MAX_DETAILS ? details.slice(0, MAX_DETAILS) : details } : {}),
      ...(details && details.length > MAX_DETAILS ? { details_omitted: details.length - MAX_DETAILS } : {}),
      timestamp: new Date().toISOString(),
      request_id: requestId,
    },
  };
}

/**
 * The whole error response, the same whichever path sends it (Fastify's reply or the lean read path): the
 * headers that say the error's facts, those only HTTP knows, and the body. `cookies` renders cookies to clear.
 */
export function errorResponse(err: AppError, requestId: string, cookies?: CookieNames): { status: number; headers: Record<string, string | string[]>; json: string } {
  return {
    status: err.status,
    headers: { ...factHeaders(err.facts, cookies), ...err.headers, 'cache-control': 'no-store', 'content-type': JSON_CONTENT_TYPE },
    json: JSON.stringify(errorBody(err, requestId)),
  };
}

/** Fastify's own error codes, by the catalog code they become. */
const FASTIFY_CODES: Record<string, () => AppError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json (or application/merge-patch+json for PATCH, or an HTML form).'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than the limit.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new AppError('BAD_REQUEST', 'Content-Length does not match the body.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new AppError('INVALID_JSON', 'The body is empty; send a JSON object.'),
  FST_ERR_CTP_INVALID_TYPE: () => new AppError('UNSUPPORTED_MEDIA_TYPE', 'The Content-Type header is not valid.'),
  FST_ERR_BAD_URL: () => new AppError('BAD_REQUEST', 'The request target is not a valid URL.'),
  FST_ERR_ASYNC_CONSTRAINT: () => new AppError('BAD_REQUEST', 'The request is malformed.'),
};

/** Any thrown value → an AppError; unknown failures become a bare 500 that discloses nothing. */
export function toAppError(err: unknown): { error: AppError; internal: boolean } {
  if (err instanceof AppError) return { error: err, internal: false };
  // Contention that outlasted every retry: the request was sound, try again shortly.
  if (err instanceof StoreBusy)
    return {
      error: new AppError('SERVICE_UNAVAILABLE', 'The service is busy with concurrent changes to the same data; retry shortly.', { facts: { retryAfterSeconds: 1 } }),
      internal: false,
    };
  const e = err as { code?: string; statusCode?: number; message?: string; name?: string } | undefined;
  const mapped = e?.code ? FASTIFY_CODES[e.code] : undefined;
  if (mapped) return { error: mapped(), internal: false };
  if (e?.code === 'FST_ERR_VALIDATION') return { error: new AppError('BAD_REQUEST', e.message ?? 'The request is malformed.'), internal: false };
  if (e?.statusCode === 413) return { error: FASTIFY_CODES.FST_ERR_CTP_BODY_TOO_LARGE!(), internal: false };
  if (e?.statusCode === 415) return { error: FASTIFY_CODES.FST_ERR_CTP_INVALID_MEDIA_TYPE!(), internal: false };
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return { error: new AppError('BAD_REQUEST', 'The request is malformed.'), internal: false };
  }
  return { error: new AppError('INTERNAL_ERROR', 'Something went wrong on our side. Quote the request id if you report it.'), internal: true };
}
