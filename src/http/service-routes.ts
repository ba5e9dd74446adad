// Service endpoints outside the resource model: liveness, readiness and metrics.
import { AppError } from '../errors/app-error.js';
import type { HttpDeps } from './deps.js';
import type { RouteSpec } from './operation-routes.js';

/** The handlers of `health.live`, `health.ready` and `metrics` (src/catalog/platform-operations.ts), for the API and a worker's operator server (src/http/operator-server.ts). */
export function serviceHandlers(deps: Pick<HttpDeps, 'readiness' | 'metrics'>): Record<string, RouteSpec> {
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
    handler: async (_req, reply) => {
      reply.header('cache-control', 'no-store').type(deps.metrics.contentType);
      return deps.metrics.text();
    },
  };
  return { 'health.live': live, 'health.ready': ready, metrics };
}
