// Serves each version's OpenAPI document (DESIGN §7): rendered once from the catalog on first request, then the same bytes (compressed as asked) with a strong ETag.
import { renderOpenApi } from '../openapi/render.js';
import { ifNoneMatchHits } from './conditional.js';
import type { HttpDeps } from './deps.js';
import { ipLimitHook } from './auth-hooks.js';
import type { RouteSpec } from './operation-routes.js';
import { choose, precompress, type Precompressed } from './precompressed.js';

/** The handlers of `vN.openapi`, one per served version. */
export function openApiHandlers(deps: HttpDeps): Record<string, RouteSpec> {
  const out: Record<string, RouteSpec> = {};
  for (const v of deps.model.versions) {
    let rendered: Precompressed | undefined;
    out[`${v.name}.openapi`] = {
      // Public: anonymous traffic counts per client address, as on every public endpoint.
      onRequest: ipLimitHook(deps),
      handler: async (request, reply) => {
        // ~380 KB of JSON, ~13 KB in Brotli: what a client that accepts compression pays for.
        rendered ??= precompress(
          renderOpenApi({ model: deps.model, catalog: deps.catalog, version: v.name, strategy: deps.config.versioning, sessionCookie: deps.cookieNames.session }).body,
        );
        const accept = request.headers['accept-encoding'];
        const chosen = choose(rendered, typeof accept === 'string' ? accept : undefined);
        // Public and the same for everyone: shared caches may keep it, per coding, revalidating with the ETag.
        const vary = reply.getHeader('vary');
        reply
          .header('etag', chosen.etag)
          .header('cache-control', 'public, max-age=300')
          .header('vary', vary === undefined ? 'Accept-Encoding' : `${String(vary)}, Accept-Encoding`);
        const ifNoneMatch = request.headers['if-none-match'];
        if (typeof ifNoneMatch === 'string' && ifNoneMatchHits(ifNoneMatch, chosen.etag)) return reply.code(304).send();
        if (chosen.coding !== 'identity') reply.header('content-encoding', chosen.coding);
        return reply.type('application/json; charset=utf-8').send(chosen.bytes);
      },
    };
  }
  return out;
}
