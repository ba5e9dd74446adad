// GraphQL errors in the catalog's terms (DESIGN §7): every error carries `extensions.code` from docs/errors.md, validation ones `extensions.details`.
import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import { AppError, type ErrorDetail, type ErrorFacts } from '../errors/app-error.js';
import type { ErrorCode } from '../errors/catalog.js';
import { StoreBusy } from '../store/types.js';
import { schemaPath } from './names.js';

/** As the REST body (src/http/error-body.ts MAX_DETAILS): an error names at most this many problems. */
const MAX_DETAILS = 100;

export interface CanonFormattedError extends GraphQLFormattedError {
  readonly extensions: { code: ErrorCode; details?: ErrorDetail[] };
}

/** An error of the request as a whole (nothing ran, or it was refused before running): its code, and its facts for headers. */
export interface RequestError {
  error: AppError;
  /** Where in the document, for parse and validation errors. */
  locations?: ReadonlyArray<{ line: number; column: number }>;
}

/**
 * Details as the request named things: a body's fields in camelCase (`fullName`, `price.amount`); arguments'
 * details are named as arguments already (src/graphql/list-args.ts).
 */
function detailsOf(err: AppError): ErrorDetail[] | undefined {
  if (!err.details) return undefined;
  const details = err.details.slice(0, MAX_DETAILS);
  return err.code === 'VALIDATION_ERROR' ? details.map((d) => ({ ...d, field: schemaPath(d.field) })) : details;
}

/** The catalog error a resolver's failure is: an AppError as it is, contention as 503, anything else a 500 that says nothing. */
export function appErrorOf(original: unknown): { error: AppError; internal: boolean } {
  if (original instanceof AppError) return { error: original, internal: false };
  if (original instanceof StoreBusy) {
    return {
      error: new AppError('SERVICE_UNAVAILABLE', 'The service is busy with concurrent changes to the same data; retry shortly.', { facts: { retryAfterSeconds: 1 } }),
      internal: false,
    };
  }
  return { error: new AppError('INTERNAL_ERROR', 'Something went wrong on our side. Quote the request id if you report it.'), internal: true };
}

function formatted(err: AppError, where: Pick<GraphQLFormattedError, 'locations' | 'path'>): CanonFormattedError {
  const details = detailsOf(err);
  return {
    message: err.message,
    ...(where.locations ? { locations: where.locations } : {}),
    ...(where.path ? { path: where.path } : {}),
    extensions: { code: err.code, ...(details ? { details } : {}) },
  };
}

/**
 * An execution error (a field's resolver threw, or a value did not fit its type): the catalog error it is, at its
 * place in the response. `internal` is told of failures that are not answers (bugs), for the log.
 */
export function formatFieldError(err: GraphQLError, internal: (cause: unknown) => void): { error: CanonFormattedError; facts: ErrorFacts } {
  // A value a resolver returned that its type refuses has no original error: it is ours, not the caller's.
  const { error, internal: isInternal } = appErrorOf(err.originalError ?? err);
  if (isInternal) internal(err.originalError ?? err);
  return { error: formatted(error, { ...(err.locations ? { locations: err.locations } : {}), ...(err.path ? { path: err.path } : {}) }), facts: error.facts };
}

export function formatRequestError(e: RequestError): CanonFormattedError {
  return formatted(e.error, e.locations ? { locations: e.locations } : {});
}
