// Every rule, in the order the checker runs them (rules that read the whole run's log come after the others; the burst last).
import { cacheControl, etag, notModified } from './caching.js';
import { errorBody, requestId } from './errors.js';
import { inFlight, mismatch, replay } from './idempotency.js';
import { rateLimitHeaders, tooManyRequests } from './limits.js';
import { methodNotAllowed, optionsAllow } from './methods.js';
import { bounded, cursorTamper, maxLimit, nextLinks, shape } from './pagination.js';
import { unknownFields, unknownFilter, unknownSort } from './query.js';
import type { Rule } from './rule.js';
import { badRequest, notAcceptable, notFound, unauthorized } from './status.js';
import { cookies, hsts } from './transport.js';
import { deprecation } from './versioning.js';
import { createDelete, precondition, unsupportedMediaType } from './writes.js';

export const RULES: readonly Rule[] = [
  optionsAllow,
  methodNotAllowed,
  notFound,
  badRequest,
  notAcceptable,
  unauthorized,
  errorBody,
  requestId,
  bounded,
  maxLimit,
  shape,
  nextLinks,
  cursorTamper,
  unknownFilter,
  unknownSort,
  unknownFields,
  etag,
  notModified,
  cacheControl,
  rateLimitHeaders,
  createDelete,
  unsupportedMediaType,
  precondition,
  replay,
  mismatch,
  inFlight,
  deprecation,
  hsts,
  cookies,
  tooManyRequests,
];

/** `--only`/`--skip` entries match an id or an id prefix (`pagination` matches `pagination.*`). */
export function matches(rule: Rule, pattern: string): boolean {
  return rule.id === pattern || rule.id.startsWith(`${pattern}.`);
}

/** The entries that name no rule, for a clear error. */
export function unknownPatterns(patterns: string[]): string[] {
  return patterns.filter((p) => !RULES.some((r) => matches(r, p)));
}
