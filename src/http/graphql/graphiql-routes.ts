// GraphiQL at `GET /graphql` for a browser (issue 29.7): which requests get the page instead of the endpoint, the page's handler, and its files' (graphql.asset), every byte prepared at start.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { preferredMediaType } from '../transport/negotiate.js';
import { AppError } from '../../errors/app-error.js';
import { GRAPHIQL_ASSETS, type GraphiqlAsset } from '../../catalog/graphiql-operations.js';
import { newestVersion } from '../../model/compile.js';
import type { HttpDeps } from '../deps.js';
import { asset } from '../rendering/docs-assets.js';
import { readGraphiqlFiles, type GraphiqlFiles } from '../rendering/graphiql-assets.js';
import { GRAPHIQL_CSP, renderGraphiqlPage } from '../rendering/graphiql-page.js';
import { checkQuery, FINGERPRINTED_CACHE, NAMED_CACHE, PAGE_CACHE, send } from '../routes/docs-routes.js';
import { limitIp } from '../transport/auth-hooks.js';
import type { RouteSpec } from '../routes/operation-routes.js';

/** GraphQL's media types first: Accept of any type (a tie among all three) stays the endpoint's, as today; between named types of equal weight Accept's order decides (Negotiator). */
const CANDIDATES = ['application/json', 'application/graphql-response+json', 'text/html'];

/**
 * Whether a request to `/graphql` is a browser opening the page rather than a GraphQL request: GET or HEAD
 * (RFC 9110 §9.3.2: HEAD answers as GET would), no query parameter at all (a `query`, or anything a GraphQL
 * request carries, keeps the endpoint's answer, errors included), and an Accept that prefers text/html over
 * both GraphQL media types (RFC 9110 §12.5.1; a browser's navigation sends `text/html` first, then any type at q=0.8). A
 * client sending no Accept, any type or a JSON type gets the endpoint's answer exactly as before.
 */
export function wantsGraphiql(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const accept = request.headers.accept;
  if (accept === undefined || accept === '') return false;
  if (Object.keys(request.query as Record<string, unknown>).length > 0) return false;
  return preferredOfCandidates(accept) === 'text/html';
}

const preferredOfCandidates = preferredMediaType(CANDIDATES);

/** Adds Accept to Vary, beside whatever the versioning strategy put there (RFC 9110 §12.5.5): /graphql's answer depends on it. */
function varyOnAccept(reply: FastifyReply): void {
  const present = reply.getHeader('vary');
  const names = typeof present === 'string' ? present.split(',').map((v) => v.trim()) : [];
  if (!names.some((n) => n.toLowerCase() === 'accept')) reply.header('vary', [...names.filter(Boolean), 'Accept'].join(', '));
}

export interface GraphiqlPage {
  /** onRequest for the page: public, anonymous traffic counted per client address as on every public endpoint. */
  onRequest: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;
}

/** The page (served through graphql.query's route) and the graphql.asset operation's handler. */
export function graphiqlHandlers(deps: HttpDeps, files: GraphiqlFiles = readGraphiqlFiles()): { page: GraphiqlPage; routes: Record<string, RouteSpec> } {
  const missing = (): AppError => new AppError('SERVICE_UNAVAILABLE', 'GraphiQL is not part of this build of the server (its log says where it was looked for).');
  // The paths go to the operator's log, not to anonymous clients.
  if (files.missing) deps.log.warn({ looked_for: files.missing }, 'GraphiQL is missing (build with npm run build): a browser’s GET /graphql answers 503');
  const assetUrl = (name: GraphiqlAsset): string => `/graphql/assets/${name}?v=${files.assets.get(name)?.fingerprint ?? ''}`;
  const html = asset(renderGraphiqlPage({ title: 'Canon API', strategy: deps.config.versioning, newest: newestVersion(deps.model), assetUrl }), 'text/html; charset=utf-8');

  const page: GraphiqlPage = {
    onRequest: (request, reply) => limitIp(deps, request, reply),
    handler: async (request, reply) => {
      if (files.missing) throw missing();
      varyOnAccept(reply);
      reply.header('content-security-policy', GRAPHIQL_CSP).header('referrer-policy', 'no-referrer');
      return send(request, reply, html, PAGE_CACHE);
    },
  };

  const assetRoute: RouteSpec = {
    // Anonymous traffic counts per client address, as on every public endpoint.
    onRequest: (request, reply) => limitIp(deps, request, reply),
    handler: async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      checkQuery(query, 'v');
      const name = (request.params as { asset?: string }).asset ?? '';
      if (!(GRAPHIQL_ASSETS as readonly string[]).includes(name)) throw new AppError('ROUTE_NOT_FOUND', `There is no asset ${JSON.stringify(name.slice(0, 64))} of GraphiQL.`);
      const a = files.assets.get(name as GraphiqlAsset);
      if (!a) throw missing();
      return send(request, reply, a, query.v === a.fingerprint ? FINGERPRINTED_CACHE : NAMED_CACHE);
    },
  };

  return { page, routes: { 'graphql.asset': assetRoute } };
}
