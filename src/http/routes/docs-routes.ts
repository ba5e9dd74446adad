// The handlers of docs.reference, docs.asset and docs.changelog (src/catalog/docs-operations.ts): the offline reference of DESIGN §7, every byte prepared at start.
import { AppError, type ErrorDetail } from '../../errors/app-error.js';
import { DOCS_ASSETS, type DocsAsset } from '../../catalog/docs-operations.js';
import type { HttpDeps } from '../deps.js';
import { asset, readDocsFiles, type Asset, type DocsFiles } from '../rendering/docs-assets.js';
import { DOCS_CSP, renderDocsPage } from '../rendering/docs-page.js';
import { readGuides } from './guide-routes.js';
import { ipLimitHook } from '../transport/auth-hooks.js';
import type { RouteSpec } from './operation-routes.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendRepresentation } from '../transport/compress-hook.js';

/** The page changes with a release only; it names its assets by fingerprint, so a short life costs one revalidation. */
export const PAGE_CACHE = 'public, max-age=300';
/** An asset asked for by its current fingerprint: those bytes for good (RFC 9111 §5.2.2.1, RFC 8246 immutable). */
export const FINGERPRINTED_CACHE = 'public, max-age=31536000, immutable';
/** An asset asked for by its name alone (or an older page's fingerprint): the name may mean other bytes after an upgrade. */
export const NAMED_CACHE = 'public, max-age=300';
/** A version as the selector takes it (`2` or `v2`). */
const SPELLING = /^v?([0-9]{1,6})$/;

/**
 * Sends `a` in the coding the request accepts (or 304 when If-None-Match holds that coding's ETag) with `cacheControl`;
 * each file is compressed once per coding, at its first request, and kept as long as the file is.
 */
export function send(request: FastifyRequest, reply: FastifyReply, a: Asset, cacheControl: string): FastifyReply {
  reply.header('cache-control', cacheControl);
  return sendRepresentation(request, reply, request.server.compression, { body: a.body, etag: a.etag, contentType: a.contentType, memo: true });
}

/** 400 INVALID_QUERY naming every parameter but `allowed`, and any allowed one given twice. */
export function checkQuery(query: Record<string, unknown>, allowed: string): void {
  const details: ErrorDetail[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (key !== allowed) details.push({ field: key, message: 'is not a parameter of this page' });
    else if (typeof value !== 'string') details.push({ field: key, message: 'must be given once' });
  }
  if (details.length) throw new AppError('INVALID_QUERY', 'The query parameters are invalid.', { details });
}

export function docsHandlers(deps: HttpDeps, files: DocsFiles = readDocsFiles(), guides: readonly string[] = [...readGuides().keys()].sort()): Record<string, RouteSpec> {
  const { model, config } = deps;
  const versions = model.versions;
  const served = versions.map((v) => v.name).join(', ');
  const missing = (): AppError => new AppError('SERVICE_UNAVAILABLE', 'The reference renderer is not part of this build of the server (its log says where it was looked for).');
  // The paths go to the operator's log, not to anonymous clients.
  if (files.missingRenderer) deps.log.warn({ looked_for: files.missingRenderer }, 'the /docs renderer is missing (build with npm run build): /docs answers 503');
  const assetUrl = (name: DocsAsset): string => `/docs/assets/${name}?v=${files.assets.get(name)?.fingerprint ?? ''}`;
  const pages = new Map<string, Asset>(
    versions.map((current) => [
      current.name,
      asset(
        renderDocsPage({ title: 'Canon API', versions, current, strategy: config.versioning, guides, changelog: files.changelog !== undefined, assetUrl }),
        'text/html; charset=utf-8',
      ),
    ]),
  );

  const reference: RouteSpec = {
    // Anonymous traffic counts per client address, as on every public endpoint.
    onRequest: ipLimitHook(deps),
    handler: async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      checkQuery(query, 'version');
      const named = query.version as string | undefined;
      const digits = named === undefined ? undefined : SPELLING.exec(named.trim())?.[1];
      const name = named === undefined ? versions[0]!.name : digits === undefined ? undefined : `v${Number(digits)}`;
      const page = name === undefined ? undefined : pages.get(name);
      if (!page)
        throw new AppError('UNSUPPORTED_VERSION', `This server does not serve ${JSON.stringify(String(named).slice(0, 64))}.`, {
          details: [{ field: 'version', message: `must be one of ${served}`, value: String(named).slice(0, 64) }],
        });
      if (files.missingRenderer) throw missing();
      reply.header('content-security-policy', DOCS_CSP).header('referrer-policy', 'no-referrer');
      return send(request, reply, page, PAGE_CACHE);
    },
  };

  const assetRoute: RouteSpec = {
    // Anonymous traffic counts per client address, as on every public endpoint.
    onRequest: ipLimitHook(deps),
    handler: async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      checkQuery(query, 'v');
      const name = (request.params as { asset?: string }).asset ?? '';
      if (!(DOCS_ASSETS as readonly string[]).includes(name)) throw new AppError('ROUTE_NOT_FOUND', `There is no asset ${JSON.stringify(name.slice(0, 64))} of the reference.`);
      const a = files.assets.get(name as DocsAsset);
      if (!a) throw missing();
      return send(request, reply, a, query.v === a.fingerprint ? FINGERPRINTED_CACHE : NAMED_CACHE);
    },
  };

  const changelog: RouteSpec = {
    // Anonymous traffic counts per client address, as on every public endpoint.
    onRequest: ipLimitHook(deps),
    handler: async (request, reply) => {
      if (!files.changelog) throw new AppError('ROUTE_NOT_FOUND', 'This server has no changelog.');
      return send(request, reply, files.changelog, PAGE_CACHE);
    },
  };

  return { 'docs.reference': reference, 'docs.asset': assetRoute, 'docs.changelog': changelog };
}
