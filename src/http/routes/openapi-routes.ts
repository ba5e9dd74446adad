// Serves each version's OpenAPI document (DESIGN §7) through Fastify: the same bytes as the lean path (src/http/transport/fast-documents.ts), compressed as asked, with a strong ETag.
import { ipLimitHook } from '../transport/auth-hooks.js';
import { ifNoneMatchHits } from '../rendering/conditional.js';
import type { HttpDeps } from '../deps.js';
import type { DocumentCache } from '../rendering/document-cache.js';
import type { RouteSpec } from './operation-routes.js';
import { choose } from '../rendering/precompressed.js';

/** The headers of a document response beside the transport's: validators, caching, the coding and why it varies. */
export function documentHeaders(etag: string, vary: string | undefined): Record<string, string> {
  return {
    etag,
    // Public and the same for everyone: shared caches may keep it, per coding, revalidating with the ETag.
    'cache-control': 'public, max-age=300',
    vary: vary === undefined ? 'Accept-Encoding' : `${vary}, Accept-Encoding`,
  };
}

/** The handlers of `vN.openapi`, one per served version. */
export function openApiHandlers(deps: HttpDeps, documents: DocumentCache): Record<string, RouteSpec> {
  const out: Record<string, RouteSpec> = {};
  for (const v of deps.model.versions) {
    out[`${v.name}.openapi`] = {
      // Public: anonymous traffic counts per client address, as on every public endpoint.
      onRequest: ipLimitHook(deps),
      handler: async (request, reply) => {
        const accept = request.headers['accept-encoding'];
        const chosen = choose(documents.of(v.name), typeof accept === 'string' ? accept : undefined);
        const vary = reply.getHeader('vary');
        reply.headers(documentHeaders(chosen.etag, vary === undefined ? undefined : String(vary)));
        const ifNoneMatch = request.headers['if-none-match'];
        if (typeof ifNoneMatch === 'string' && ifNoneMatchHits(ifNoneMatch, chosen.etag)) return reply.code(304).send();
        if (chosen.coding !== 'identity') reply.header('content-encoding', chosen.coding);
        return reply.type('application/json; charset=utf-8').send(chosen.bytes);
      },
    };
  }
  return out;
}
