// Turns the facts an error carries (src/errors/app-error.ts) into the HTTP headers that say them: WWW-Authenticate, Retry-After, X-RateLimit-*, Set-Cookie.
import type { ErrorFacts } from '../../errors/app-error.js';
import { clearCookie, type CookieNames } from '../../auth/session-cookies.js';

/** RFC 9110 §11.6.1 challenges, comma-separated in one header; parameter values quoted. */
function challengeHeader(facts: ErrorFacts): string | undefined {
  if (!facts.challenges?.length) return undefined;
  return facts.challenges
    .map((c) =>
      [
        c.scheme,
        Object.entries(c.params)
          .map(([k, v]) => `${k}="${v.replace(/["\\]/g, '\\$&')}"`)
          .join(', '),
      ]
        .filter(Boolean)
        .join(' '),
    )
    .join(', ');
}

/** The headers of `facts`; `cookies` renders cookies to clear with the attributes they were set with. */
export function factHeaders(facts: ErrorFacts, cookies?: CookieNames): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  const challenge = challengeHeader(facts);
  if (challenge) headers['www-authenticate'] = challenge;
  if (facts.rateLimit) {
    headers['x-ratelimit-limit'] = String(facts.rateLimit.limit);
    headers['x-ratelimit-remaining'] = String(facts.rateLimit.remaining);
    headers['x-ratelimit-reset'] = String(facts.rateLimit.resetAt);
  }
  if (facts.retryAfterSeconds !== undefined) headers['retry-after'] = String(facts.retryAfterSeconds);
  if (facts.clearCookies?.length && cookies) headers['set-cookie'] = facts.clearCookies.map((name) => clearCookie(cookies, name));
  return headers;
}
