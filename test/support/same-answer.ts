// What two answers to one request must share whichever path sent them (a lean path or the Fastify route): status, headers and body, less what differs per request or per moment.
import type { Response } from './harness.js';

/** Differs per request or per moment, never per path. */
const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset']);

/** The answer with its volatile headers left out and an error body's request id and time masked. */
export function stable(res: Response): { status: number; headers: Record<string, string>; body: unknown } {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (!VOLATILE.has(k)) headers[k] = v;
  let body = res.body as Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (body?.error) body = { error: { ...body.error, request_id: '<id>', timestamp: '<time>' } };
  return { status: res.status, headers, body: body ?? res.text };
}
