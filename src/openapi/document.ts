// The OpenAPI 3.1 document of one API version, projected from the catalog (DESIGN §7): paths, components, security schemes and the event types as `webhooks`.
import type { Catalog } from '../catalog/catalog.js';
import { eventSchema, eventTypes, thinEventSchema } from '../catalog/event-catalog.js';
import type { Operation } from '../catalog/operation.js';
import { objectInVersion } from '../catalog/resource-operations.js';
import { securitySchemes } from '../catalog/security-schemes.js';
import type { CompiledModel } from '../model/compile.js';
import { ERROR_SCHEMA, LINK_SCHEMA } from '../model/output-schema.js';
import type { ApiVersion } from '../model/versions.js';
import { headerKey, operationObject, tagOf, templatePath, type OperationContext } from './operation-object.js';
import { GRAPHQL_PATH } from '../catalog/graphql-operations.js';
import { HEADERS } from '../catalog/response-headers.js';
import { ERROR_CATALOG } from '../errors/catalog.js';

type Obj = Record<string, unknown>;

/** How requests name their version (DESIGN §10); the document says it and adds the parameter it takes. */
export type VersionStrategy = 'path' | 'query' | 'header' | 'media-type' | 'date';

export interface DocumentInput {
  catalog: Catalog;
  model: CompiledModel;
  version: ApiVersion;
  strategy: VersionStrategy;
  /** The session cookie's name under the configuration. */
  sessionCookie: string;
  title?: string;
}

const VERSION_SEGMENT = /^\/(v[0-9]+)(\/|$)/;

/** `order_item` → `OrderItem`. */
function pascal(name: string): string {
  return name.replace(/(^|[_-])([a-z0-9])/g, (_, _sep: string, c: string) => c.toUpperCase());
}

/** The operations of `version`'s document: its own, and those outside any version. */
function operationsOf(catalog: Catalog, version: ApiVersion, served: ReadonlySet<string>): Operation[] {
  return catalog.operations.filter((op) => {
    if (op.version !== undefined) return op.version === version.name;
    const segment = VERSION_SEGMENT.exec(op.path)?.[1];
    return segment === undefined || !served.has(segment) || segment === version.name;
  });
}

function versionContext(version: ApiVersion, strategy: VersionStrategy): OperationContext & { selection: string } {
  const number = version.name.slice(1);
  const deprecated = version.deprecation !== undefined;
  switch (strategy) {
    case 'path':
      return { deprecated, selection: `Paths name the version: \`/${version.name}/…\`.` };
    case 'query':
      return {
        deprecated,
        selection: `Paths carry no version; \`?version=${number}\` selects this one (the newest without it).`,
        versionParameter: {
          name: 'version',
          in: 'query',
          required: false,
          description: 'The API version; the newest when absent.',
          schema: { type: 'string', enum: [number, version.name] },
        },
      };
    case 'header':
      return {
        deprecated,
        selection: `Paths carry no version; \`X-API-Version: ${number}\` selects this one (the newest without it).`,
        versionParameter: {
          name: 'X-API-Version',
          in: 'header',
          required: false,
          description: 'The API version; the newest when absent.',
          schema: { type: 'string', enum: [number, version.name] },
        },
      };
    case 'date':
      return {
        deprecated,
        selection: `Paths carry no version; \`Canon-Version: ${version.date}\` (or any later date before the next release) selects this one; without it, the credential's pinned version.`,
        versionParameter: {
          name: 'Canon-Version',
          in: 'header',
          required: false,
          description: 'A release date (YYYY-MM-DD): the newest version released on or before it.',
          schema: { type: 'string', format: 'date' },
        },
      };
    case 'media-type':
      return {
        deprecated,
        selection: `Paths carry no version; \`Accept: application/vnd.canon.${version.name}+json\` selects this one.`,
        vendorType: `application/vnd.canon.${version.name}+json`,
      };
  }
}

/** Replaces every inline copy of a named schema by its `$ref` (the document's components), deepest last. */
function share(node: unknown, named: Map<string, Obj>, top = true): unknown {
  if (Array.isArray(node)) return node.map((n) => share(n, named, false));
  if (typeof node !== 'object' || node === null) return node;
  if (!top) {
    const ref = named.get(JSON.stringify(node));
    if (ref) return ref;
  }
  const out: Obj = {};
  for (const [k, v] of Object.entries(node)) out[k] = share(v, named, false);
  return out;
}

/** The headers the document uses (`used`: its text that refers to them), as reusable header objects (§4.8.21). */
function headerComponents(used: string): Obj {
  const out: Obj = {};
  for (const h of Object.values(HEADERS)) {
    for (const required of [true, false]) {
      const key = headerKey(h.name, required);
      if (used.includes(`"#/components/headers/${key}"`)) out[key] = { description: h.description, required, schema: h.schema };
    }
  }
  return out;
}

/** What a tag groups: a resource's description, or the platform family's purpose. */
function tagDescription(model: CompiledModel, tag: string): string {
  const r = model.resources.get(tag);
  if (r) return r.def.description ?? `The ${tag.replace(/-/g, ' ')} resource: its collection, objects, actions and nested collections.`;
  const families: Record<string, string> = {
    webhooks: 'The event types, as Canon delivers them to registered endpoints (Standard Webhooks signatures).',
    sessions: 'Browser sessions: log in and out; cookie-authenticated writes need the CSRF token.',
    oauth: 'OAuth 2.0: the token endpoint (client credentials), its metadata and the token-signing keys.',
    events: 'The event feed: pages of events, or a Server-Sent Events stream.',
    health: 'Liveness and readiness for orchestrators.',
    metrics: 'Prometheus metrics for operators.',
    docs: 'Documentation: migration guides between versions.',
    openapi: 'The OpenAPI documents of each version.',
    graphql:
      'GraphQL: one endpoint over the same resources, permissions and services (docs/graphql.md; the schema in docs/schema.graphql). Opened in a browser, `/graphql` is GraphiQL, an in-browser IDE served whole by this server.',
  };
  return families[tag] ?? `The ${tag} operations.`;
}

/** The error body with every code it may carry and what each means (the published catalog, docs/errors.md). */
function errorSchema(): Obj {
  const error = (ERROR_SCHEMA.properties as Record<string, Obj>).error!;
  const props = error.properties as Record<string, Obj>;
  const code = {
    type: 'string',
    description: Object.entries(ERROR_CATALOG)
      .map(([c, e]) => `- \`${c}\` (${e.status}): ${e.description}`)
      .join('\n'),
    enum: Object.keys(ERROR_CATALOG),
  };
  return { ...ERROR_SCHEMA, properties: { error: { ...error, properties: { ...props, code } } } };
}

export function openApiDocument(input: DocumentInput): Obj {
  const { catalog, model, version, strategy } = input;
  const served = new Set(model.versions.map((v) => v.name));
  const ctx = versionContext(version, strategy);
  const ops = operationsOf(catalog, version, served);

  const schemas: Obj = { Error: errorSchema(), Link: LINK_SCHEMA };
  const named = new Map<string, Obj>();
  const name = (key: string, schema: Obj): void => {
    schemas[key] = schema;
    named.set(JSON.stringify(schema), { $ref: `#/components/schemas/${key}` });
  };
  for (const r of model.resources.values()) if (!r.def.internal) name(pascal(r.singular), objectInVersion(version, r));
  named.set(JSON.stringify(LINK_SCHEMA), { $ref: '#/components/schemas/Link' });
  const errorRef = { $ref: '#/components/schemas/Error' };

  // Error responses are the same body with the same headers across most operations: each distinct one is named once.
  const responses: Obj = {};
  const responseNames = new Map<string, string>();
  const errorResponse = (response: Obj): Obj => {
    const text = JSON.stringify(response);
    let key = responseNames.get(text);
    if (key === undefined) {
      const status = /[0-9]{3}/.exec(String(response.description))?.[0] ?? 'Error';
      const base = `Error${status}`;
      let n = 1;
      key = base;
      while (key in responses) key = `${base}_${++n}`;
      responses[key] = response;
      responseNames.set(text, key);
    }
    return { $ref: `#/components/responses/${key}` };
  };

  const paths: Obj = {};
  for (const op of ops) {
    let path = templatePath(op.path);
    if (strategy !== 'path' && VERSION_SEGMENT.exec(path)?.[1] === version.name) path = path.slice(version.name.length + 1) || '/';
    const item = (paths[path] ??= {}) as Obj;
    item[op.method.toLowerCase()] = operationObject(op, ctx, errorRef, errorResponse);
  }

  const webhooks: Obj = {};
  const events = eventTypes(model);
  if (events.length > 0) schemas.ThinEvent = thinEventSchema();
  for (const event of events) {
    const key = `${pascal(event.type.replace('.', '_'))}Event`;
    schemas[key] = eventSchema(model, version, event);
    webhooks[event.type] = {
      post: {
        operationId: `webhook.${event.type}`,
        summary: event.type,
        description: `${event.description} Delivered to every endpoint subscribed to it whose owner may see the object, signed per Standard Webhooks.`,
        tags: ['webhooks'],
        parameters: [
          { name: 'webhook-id', in: 'header', required: true, description: 'The event id: deduplicate by it.', schema: { type: 'string' } },
          {
            name: 'webhook-timestamp',
            in: 'header',
            required: true,
            description: 'Unix seconds when it was signed; refuse it when more than 5 minutes off.',
            schema: { type: 'string' },
          },
          {
            name: 'webhook-signature',
            in: 'header',
            required: true,
            description: '`v1,<base64 HMAC-SHA256 of id.timestamp.body>`, space-separated during a secret rotation.',
            schema: { type: 'string' },
          },
        ],
        requestBody: {
          required: true,
          description: 'The event; a body over 64 KiB is sent thin instead (`ThinEvent`: fetch the object by its URL).',
          content: { 'application/json': { schema: { oneOf: [{ $ref: `#/components/schemas/${key}` }, { $ref: '#/components/schemas/ThinEvent' }] } } },
        },
        responses: { '200': { description: 'Received; any 2xx counts. Anything else, or no answer within the timeout, is retried with backoff.' } },
        // The receiver authenticates Canon by the signature, not by a credential Canon sends.
        security: [],
      },
    };
  }

  const tags = [...new Set(ops.map(tagOf)), 'webhooks'].map((t) => ({
    name: t,
    description: tagDescription(model, t),
    // The GraphQL endpoint's page for people, as the reference links it (Redoc shows a tag's externalDocs under it).
    ...(t === 'graphql' ? { externalDocs: { description: 'GraphiQL: explore and run GraphQL in the browser', url: GRAPHQL_PATH } } : {}),
  }));
  const deprecation = version.deprecation;
  const description = [
    `Version ${version.name}, released ${version.date}${version.description ? `: ${version.description}` : '.'}`,
    ctx.selection,
    deprecation
      ? `Deprecated since ${deprecation.date}; it may stop being served after ${deprecation.sunset}. Every response carries \`Deprecation\`, \`Sunset\` and \`Link: <${deprecation.guide}>; rel="deprecation"\`.`
      : '',
    'Errors share one body (`#/components/schemas/Error`); each error response lists its codes in `x-canon-error-codes` (the catalog: docs/errors.md). Every response carries `X-Request-Id`.',
    'Reference: `/docs`. Event types are listed under `webhooks`; the same events are read at `GET /events` (JSON pages or `text/event-stream`).',
    `GraphQL: the same resources at \`${GRAPHQL_PATH}\`; opened in a browser it is [GraphiQL](${GRAPHQL_PATH}), to explore the schema and run queries.`,
  ]
    .filter(Boolean)
    .join('\n\n');
  const document: Obj = {
    openapi: '3.1.1',
    info: { title: input.title ?? 'Canon API', version: `${version.name} (${version.date})`, description, license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: '/', description: 'This server' }],
    tags,
    paths: share(paths, named),
    webhooks: share(webhooks, named),
    // Each named schema keeps its own body (not a reference to itself); copies inside it are shared.
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).map(([key, schema]) => [key, share(schema, named)])),
      responses,
      headers: headerComponents(JSON.stringify([paths, responses])),
      securitySchemes: securitySchemes(model, catalog.operations, input.sessionCookie),
    },
  };
  return document;
}
