// Each version's OpenAPI document, rendered and compressed once per process, shared by its Fastify route and the lean path.
import { renderOpenApi } from '../../openapi/render.js';
import type { HttpDeps } from '../deps.js';
import { precompress, type Precompressed } from './precompressed.js';

export class DocumentCache {
  private readonly rendered = new Map<string, Precompressed>();

  constructor(private readonly deps: Pick<HttpDeps, 'model' | 'catalog' | 'config' | 'cookieNames'>) {}

  /** The document of `version` (`v2`): ~380 KB of JSON, ~13 KB in Brotli, built at the first request. */
  of(version: string): Precompressed {
    let doc = this.rendered.get(version);
    if (!doc) {
      const { model, catalog, config, cookieNames } = this.deps;
      doc = precompress(renderOpenApi({ model, catalog, version, strategy: config.versioning, sessionCookie: cookieNames.session }));
      this.rendered.set(version, doc);
    }
    return doc;
  }
}
