// The handlers of resource operations (collections, objects, nested collections, actions), one per catalog entry.
import { UUID_PATTERN as UUID } from '../../lib/uuid.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Operation } from '../../catalog/operation.js';
import { AppError } from '../../errors/app-error.js';
import type { CompiledResource } from '../../model/compile.js';
import { checkBodyInVersion } from '../../model/validate.js';
import { translatePathDown, translateUp, type ApiVersion } from '../../model/versions.js';
import { versionOf } from '../../model/compile.js';
import { countVersion } from '../versioning/version-usage.js';
import type { StoredResponse } from '../../services/idempotency.js';
import type { ActionResult, Created, Ctx, Loaded, ParentRef } from '../../services/resource-service.js';
import { grantFor, none } from '../../services/permissions.js';
import type { HttpDeps } from '../deps.js';
import { authHook, csrfHook } from '../transport/auth-hooks.js';
import { idempotent, send } from './idempotent.js';
import { etagOf, lastModifiedOf, OBJECT_CACHE_CONTROL as PRIVATE, writePrecondition } from '../rendering/conditional.js';
import { JSON_CONTENT_TYPE } from '../transport/negotiate.js';
import { renderList, withPageLink } from '../rendering/list-response.js';
import { readObject } from '../rendering/object-body.js';
import { actionPath, objectPath, represent } from '../rendering/render.js';
import type { RouteSpec } from './operation-routes.js';
import { Compression } from '../rendering/compression.js';
import { sendCoded, sendNotModified, sendRepresentation } from '../transport/compress-hook.js';

type Req = FastifyRequest<{ Params: { id: string }; Querystring: Record<string, string | string[]> }>;

function idParam(request: Req): string {
  const id = request.params.id;
  if (!UUID.test(id)) throw new AppError('BAD_REQUEST', 'The id in the path is not a UUID.', { details: [{ field: 'id', message: 'must be a UUID', value: id }] });
  return id.toLowerCase();
}

function ctxOf(request: FastifyRequest): Ctx {
  return { principal: request.principal!, format: request.bodyFormat, since: request.arrivedAt ?? undefined };
}

/** A write's context: under an older version its body is checked in that version's shape first (the service calls it after authorization). */
function writeCtxOf(request: FastifyRequest, version: ApiVersion, r: CompiledResource): Ctx {
  const ctx = ctxOf(request);
  if (!version.newer) return ctx;
  return {
    ...ctx,
    checkBody: (op, role, parent) => {
      let body = request.body;
      // A nested create's parent is named by the path; the body need not repeat it.
      if (parent && typeof body === 'object' && body !== null && !Array.isArray(body)) {
        const field = translatePathDown(version, r.name, parent.field);
        const sent = body as Record<string, unknown>;
        if (sent[field] === undefined || sent[field] === null) body = { ...sent, [field]: parent.id };
      }
      checkBodyInVersion(r, version, op, role, body, ctx.format);
    },
  };
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return typeof v === 'string' ? v : undefined;
}

/** One object's response: its representation with validators; a response revealing a secret is never cached. */
function objectResponse(version: ApiVersion, r: CompiledResource, loaded: Loaded, status = 200, reveal?: Record<string, unknown>): StoredResponse {
  const revealed = reveal !== undefined && Object.keys(reveal).length > 0;
  const headers: Record<string, string> = {
    etag: etagOf(loaded.record, loaded.access, version.name),
    'last-modified': lastModifiedOf(loaded.record),
    'cache-control': revealed ? 'no-store' : PRIVATE,
  };
  // 201: where the new object is; 202 (an action whose effect follows later, a delivery's retry): where its
  // progress is read, the object itself (http-api-conventions: a 202 carries a status location).
  if (status === 201 || status === 202) headers.location = objectPath(version, r, loaded.record.id);
  const body = represent(version, r, loaded);
  return revealed ? { status, headers, body: JSON.stringify({ ...body, ...reveal }), sensitive: true } : { status, headers, body: JSON.stringify(body) };
}

/** The 202 of an asynchronous action: its outcome is read at the action's own path (DESIGN §3, §4). */
function acceptedResponse(version: ApiVersion, r: CompiledResource, id: string, action: string): StoredResponse {
  return { status: 202, headers: { location: actionPath(version, r, id, action), 'cache-control': 'no-store' }, body: JSON.stringify({ status: 'processing' }) };
}

/**
 * The routes of the catalog's resource operations (src/catalog/resource-operations.ts): authentication
 * before the body is read, the CSRF check on unsafe methods, and the handler each kind calls for.
 */
export function resourceRoutes(deps: HttpDeps): (op: Operation) => RouteSpec {
  // One CSRF hook for every resource route, and one authentication hook per version: it counts the request for
  // its version (src/http/versioning/version-usage.ts) inside the hook, not in a wrapper that would cost a promise a request.
  const csrf = csrfHook(deps);
  const counted = new Map<ApiVersion, RouteSpec['onRequest']>();
  const authFor = (version: ApiVersion): RouteSpec['onRequest'] => {
    let hook = counted.get(version);
    if (!hook) counted.set(version, (hook = authHook(deps, (principal) => countVersion(deps, version, principal))));
    return hook;
  };
  return (op) => {
    const version = versionOf(deps.model, op.version!)!;
    const spec = resourceRoute(deps, op, { onRequest: authFor(version), ...(op.csrf ? { preHandler: csrf } : {}) });
    // An older version's errors name its own fields: the error handler reads this (errorInVersion).
    return version.newer ? { ...spec, config: { ...(spec.config as object | undefined), versionOf: { version, resource: op.resource! } satisfies VersionOfRoute } } : spec;
  };
}

/** What a route of an older version tells the error handler: its version and resource. */
export interface VersionOfRoute {
  version: ApiVersion;
  resource: string;
}

function resourceRoute(deps: HttpDeps, op: Operation, hooks: Pick<RouteSpec, 'onRequest' | 'preHandler'>): RouteSpec {
  const version = versionOf(deps.model, op.version!)!;
  const r = deps.model.resources.get(op.resource!)!;
  const compression = Compression.of(deps.config);
  const parentRef = op.parent;
  const parentOf = (request: Req): ParentRef | undefined => (parentRef ? { resource: parentRef.resource, id: idParam(request), field: parentRef.field } : undefined);
  switch (op.kind) {
    case 'list': {
      const { list } = collectionHandlers(deps, version, r);
      return { ...hooks, handler: (req, reply) => list(req as Req, reply, parentOf(req as Req)) };
    }
    case 'create': {
      const { create } = collectionHandlers(deps, version, r);
      return { ...hooks, handler: (req, reply) => create(req as Req, reply, parentOf(req as Req)) };
    }
    case 'read':
      // src/http/transport/fast-reads.ts answers most of these over a socket; both share objectBody and must agree.
      return {
        ...hooks,
        handler: async (req, reply) => {
          const request = req as Req;
          const body = await readObject(deps.services, {
            version,
            resource: r,
            principal: request.principal!,
            id: idParam(request),
            ifNoneMatch: header(request, 'if-none-match'),
            ifModifiedSince: header(request, 'if-modified-since'),
            acceptEncoding: request.headers['accept-encoding'],
            compression,
            since: request.arrivedAt ?? undefined,
          });
          reply.header('etag', body.etag).header('last-modified', body.lastModified).header('cache-control', PRIVATE);
          if (body.notModified) return sendNotModified(reply, compression);
          return sendCoded(reply.code(200), compression, body.coding, body.json, JSON_CONTENT_TYPE, true);
        },
      };
    case 'replace':
    case 'update': {
      const mode = op.kind === 'replace' ? 'replace' : 'patch';
      return {
        ...hooks,
        handler: async (req, reply) => {
          const request = req as Req;
          const pre = writePrecondition(header(request, 'if-match'), header(request, 'if-unmodified-since'), version.name);
          const loaded = await deps.services.update(writeCtxOf(request, version, r), r.name, idParam(request), mode, bodyOf(version, r, request), pre);
          return send(reply, objectResponse(version, r, loaded));
        },
      };
    }
    case 'delete':
      return {
        ...hooks,
        handler: async (req, reply) => {
          const request = req as Req;
          const pre = writePrecondition(header(request, 'if-match'), header(request, 'if-unmodified-since'), version.name);
          await deps.services.remove(ctxOf(request), r.name, idParam(request), pre);
          return reply.code(204).header('cache-control', 'no-store').send();
        },
      };
    case 'action': {
      const name = op.action!;
      const status = r.def.actions![name]!.status ?? 200;
      return {
        ...hooks,
        handler: async (req, reply) => {
          const request = req as Req;
          const id = idParam(request);
          return idempotent<ActionResult>(
            deps,
            request,
            reply,
            (within) => deps.services.runAction(ctxOf(request), r.name, id, name, within, request.body),
            (result) => (result.operation ? acceptedResponse(version, r, result.record.id, name) : objectResponse(version, r, result, status, result.reveal)),
          );
        },
      };
    }
    case 'operation': {
      const name = op.action!;
      return {
        ...hooks,
        handler: async (req, reply) => {
          const request = req as Req;
          const id = idParam(request);
          const operation = await deps.services.operationOf(ctxOf(request), r.name, id, name);
          reply.header('cache-control', PRIVATE);
          return {
            status: operation.status,
            ...(operation.status === 'failed' ? { error: operation.error ?? 'The operation failed.' } : {}),
            created_at: operation.created_at,
            updated_at: operation.updated_at,
            links: [
              { rel: 'self', href: actionPath(version, r, id, name), method: 'GET' },
              { rel: 'up', href: objectPath(version, r, id), method: 'GET' },
            ],
          };
        },
      };
    }
    case 'view': {
      const name = op.action!;
      return {
        ...hooks,
        handler: async (req, reply) => {
          const request = req as Req;
          const view = await deps.services.viewAction(ctxOf(request), r.name, idParam(request), name);
          reply.header('cache-control', PRIVATE);
          return {
            ...view,
            links: [
              { rel: 'self', href: actionPath(version, r, request.params.id, name), method: 'GET' },
              { rel: 'up', href: objectPath(version, r, request.params.id), method: 'GET' },
            ],
          };
        },
      };
    }
    default:
      throw new Error(`${op.id} is not a resource operation`);
  }
}

/** The request body translated up to the latest shape (the version layer's entry point for requests). */
function bodyOf(version: ApiVersion, r: CompiledResource, request: FastifyRequest): unknown {
  const b = request.body;
  return typeof b === 'object' && b !== null && !Array.isArray(b) ? translateUp(version, r.name, b as Record<string, unknown>) : b;
}

/** List and create on a collection, top-level or nested under a parent. */
function collectionHandlers(deps: HttpDeps, version: ApiVersion, r: CompiledResource) {
  const compression = Compression.of(deps.config);
  return {
    list: async (request: Req, reply: FastifyReply, parent?: ParentRef): Promise<unknown> => {
      // src/http/transport/fast-lists.ts answers most top-level pages over a socket; both render with renderList and must agree.
      reply.header('cache-control', PRIVATE);
      const canCreate = !none(grantFor(request.principal!, r.def.permissions.create));
      const page = await renderList(deps, version, r, { url: request.url, originalUrl: request.originalUrl, query: request.query, ctx: ctxOf(request), parent, canCreate });
      if (page.link !== undefined) reply.header('link', withPageLink(reply.getHeader('link'), page.link));
      // A client polling a page it holds pays for no body when nothing in it changed (RFC 9110 §13.1.2).
      return sendRepresentation(request, reply, compression, { body: page.json, etag: page.etag, contentType: JSON_CONTENT_TYPE, memo: true });
    },
    create: async (request: Req, reply: FastifyReply, parent?: ParentRef): Promise<unknown> =>
      idempotent<Created>(
        deps,
        request,
        reply,
        (within) => deps.services.create(writeCtxOf(request, version, r), r.name, bodyOf(version, r, request), parent, within),
        (created) => objectResponse(version, r, created, 201, created.reveal),
      ),
  };
}
