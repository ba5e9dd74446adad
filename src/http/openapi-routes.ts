// Serves each version's OpenAPI document (DESIGN §7): rendered once from the catalog on first request, then the same bytes with a strong ETag.
import { renderOpenApi, type RenderedDocument } from '../openapi/render.js';
import { ifNoneMatchHits } from './conditional.js';
import type { HttpDeps } from './deps.js';
import type { RouteSpec } from './operation-routes.js';

/** The handlers of `vN.openapi`, one per served version. */
export function openApiHandlers(deps: HttpDeps): Record<string, RouteSpec> {
  const out: Record<string, RouteSpec> = {};
  for (const v of deps.model.versions) {
    let rendered: RenderedDocument | undefined;
    out[`${v.name}.openapi`] = {
      handler: async (request, reply) => {
        rendered ??= renderOpenApi({ model: deps.model, catalog: deps.catalog, version: v.name, strategy: deps.config.versioning, sessionCookie: deps.cookieNames.session });
        // Public and the same for everyone: shared caches may keep it, revalidating with the ETag.
        reply.header('etag', rendered.etag).header('cache-control', 'public, max-age=300');
        const ifNoneMatch = request.headers['if-none-match'];
        if (typeof ifNoneMatch === 'string' && ifNoneMatchHits(ifNoneMatch, rendered.etag)) return reply.code(304).send();
        return reply.type('application/json; charset=utf-8').send(rendered.body);
      },
    };
  }
  return out;
}
