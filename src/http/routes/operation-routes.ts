// Registers the catalog with Fastify: one route per operation, each with the handler its module declares; nothing else is routed.
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Catalog } from '../../catalog/catalog.js';
import type { Operation } from '../../catalog/operation.js';

/** A route's hooks and handler: everything of Fastify's route options but the method and path, which the catalog gives. */
export type RouteSpec = Omit<RouteOptions, 'method' | 'url'>;

/**
 * `platform`: the handlers of platform operations by operation id (src/http/routes/session-routes.ts, oauth-routes.ts,
 * service-routes.ts); `resource`: the handler of any resource operation. An operation without a handler, or a
 * handler without an operation, is a programming error found at start.
 */
export function registerOperations(
  app: FastifyInstance,
  catalog: Catalog,
  platform: Record<string, RouteSpec>,
  resource: (op: Operation) => RouteSpec,
  registered?: (op: Operation, spec: RouteSpec) => void,
): void {
  const unused = new Set(Object.keys(platform));
  for (const op of catalog.operations) {
    let spec: RouteSpec | undefined;
    if (op.kind === 'platform') {
      spec = platform[op.id];
      unused.delete(op.id);
    } else {
      spec = resource(op);
    }
    if (!spec) throw new Error(`the catalog's operation ${op.id} has no handler`);
    registered?.(op, spec);
    app.route({ ...spec, method: op.method, url: op.path });
  }
  if (unused.size > 0) throw new Error(`handlers without an operation in the catalog: ${[...unused].join(', ')}`);
}
