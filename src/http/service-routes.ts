// Service endpoints outside the resource model: liveness and readiness.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error.js';
import type { HttpDeps } from './app.js';
import type { RouteTable } from './route-table.js';

export function registerServiceRoutes(app: FastifyInstance, deps: HttpDeps, routes: RouteTable): void {
  routes.add('/healthz', ['GET']);
  app.get('/healthz', async (_req, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });
  routes.add('/readyz', ['GET']);
  app.get('/readyz', async (_req, reply) => {
    const run = async (checks: Record<string, () => Promise<boolean>>): Promise<Array<[string, boolean]>> =>
      Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await check().catch(() => false)] as [string, boolean]));
    const required = await run(deps.readiness.required);
    const optional = await run(deps.readiness.optional);
    const down = required.filter(([, ok]) => !ok).map(([n]) => n);
    if (down.length) {
      throw new AppError('SERVICE_UNAVAILABLE', `Not ready: ${down.join(', ')} unreachable.`, { details: down.map((field) => ({ field, message: 'unreachable' })), headers: { 'retry-after': '5' } });
    }
    reply.header('cache-control', 'no-store');
    const degraded = optional.filter(([, ok]) => !ok).map(([n]) => n);
    return {
      status: degraded.length ? 'degraded' : 'ready',
      checks: Object.fromEntries([...required.map(([n]) => [n, 'ok']), ...optional.map(([n, ok]) => [n, ok ? 'ok' : 'unreachable'])]),
      ...(degraded.length ? { notes: degraded.map((n) => (n === 'redis' ? 'redis is unreachable: rate limits are enforced per process (failing open) and events reach only this process' : `${n} is unreachable`)) } : {}),
    };
  });
}
