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
    const names = Object.keys(deps.readiness);
    const results = await Promise.all(names.map((n) => deps.readiness[n]!().catch(() => false)));
    const down = names.filter((_, i) => !results[i]);
    if (down.length) {
      throw new AppError('SERVICE_UNAVAILABLE', `Not ready: ${down.join(', ')} unreachable.`, { details: down.map((field) => ({ field, message: 'unreachable' })), headers: { 'retry-after': '5' } });
    }
    reply.header('cache-control', 'no-store');
    return { status: 'ready', checks: Object.fromEntries(names.map((n) => [n, 'ok'])) };
  });
  for (const path of ['/healthz', '/readyz']) {
    app.options(path, async (_req, reply) => reply.header('allow', routes.allowFor(path)).send());
  }
}
