// Service endpoints outside the resource model: liveness, readiness and metrics.
import { AppError } from '../../errors/app-error.js';
import type { HttpDeps } from '../deps.js';
import type { RouteSpec } from './operation-routes.js';
import { authHook } from '../transport/auth-hooks.js';
import { holdsPlatformScope } from '../../services/permissions.js';
import { METRICS_READ } from '../../platform/platform-scopes.js';
import type { FastifyRequest } from 'fastify';

/**
 * onRequest of `/metrics`, after authentication (DESIGN §9): the `metrics:read` scope. A credential restricted by
 * scopes that lacks it gets 403 INSUFFICIENT_SCOPE naming it (RFC 6750 §3.1), as a resource scope does; an
 * unrestricted principal that is not an admin (a customer's session or key) gets 403 FORBIDDEN.
 */
async function requireMetricsScope(request: FastifyRequest): Promise<void> {
  const principal = request.principal!;
  if (holdsPlatformScope(principal, METRICS_READ)) return;
  if (principal.scopes.length > 0)
    throw new AppError('INSUFFICIENT_SCOPE', `This credential lacks the scope ${METRICS_READ}.`, {
      facts: { challenges: [{ scheme: 'Bearer', params: { realm: 'canon', error: 'insufficient_scope', scope: METRICS_READ } }] },
    });
  throw new AppError('FORBIDDEN', `Only admins and credentials with the ${METRICS_READ} scope may read the metrics.`);
}

/**
 * What guards `/metrics` on the API's listener: authentication, counted against its principal like any request
 * (401 and the per-IP count without credentials), then the scope. An anonymous, unlimited /metrics was a free
 * probe of the process (issue 26.5). An operator's address (a worker's --port) serves it without.
 */
export function metricsGuard(deps: HttpDeps): NonNullable<RouteSpec['onRequest']> {
  return [authHook(deps), requireMetricsScope];
}

/**
 * The handlers of `health.live`, `health.ready` and `metrics` (src/catalog/platform-operations.ts), for the API and
 * a worker's operator server (src/http/transport/operator-server.ts); `guardMetrics` is what `/metrics` runs first.
 */
export function serviceHandlers(deps: Pick<HttpDeps, 'readiness' | 'metrics'>, guardMetrics?: RouteSpec['onRequest']): Record<string, RouteSpec> {
  const live: RouteSpec = {
    handler: async (_req, reply) => {
      reply.header('cache-control', 'no-store');
      return { status: 'ok' };
    },
  };
  const ready: RouteSpec = {
    handler: async (_req, reply) => {
      const run = async (checks: Record<string, () => Promise<boolean>>): Promise<Array<[string, boolean]>> =>
        Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await check().catch(() => false)] as [string, boolean]));
      const required = await run(deps.readiness.required);
      const optional = await run(deps.readiness.optional);
      const down = required.filter(([, ok]) => !ok).map(([n]) => n);
      if (down.length) {
        throw new AppError('SERVICE_UNAVAILABLE', `Not ready: ${down.join(', ')} unreachable.`, {
          details: down.map((field) => ({ field, message: 'unreachable' })),
          headers: { 'retry-after': '5' },
        });
      }
      reply.header('cache-control', 'no-store');
      const degraded = optional.filter(([, ok]) => !ok).map(([n]) => n);
      return {
        status: degraded.length ? 'degraded' : 'ready',
        checks: Object.fromEntries([...required.map(([n]) => [n, 'ok']), ...optional.map(([n, ok]) => [n, ok ? 'ok' : 'unreachable'])]),
        ...(degraded.length
          ? {
              notes: degraded.map((n) =>
                n === 'redis'
                  ? 'redis is unreachable: rate limits are enforced per process (failing open) and events reach only this process'
                  : n === 'worker'
                    ? 'the worker’s last round failed: webhook deliveries and asynchronous actions wait'
                    : `${n} is unreachable`,
              ),
            }
          : {}),
      };
    },
  };
  const metrics: RouteSpec = {
    ...(guardMetrics ? { onRequest: guardMetrics } : {}),
    handler: async (_req, reply) => {
      reply.header('cache-control', 'no-store').type(deps.metrics.contentType);
      return deps.metrics.text();
    },
  };
  return { 'health.live': live, 'health.ready': ready, metrics };
}
