// The operations of the offline reference (DESIGN §7, issue 27.7): the /docs page, the assets it loads and the changelog, all public.
import type { ErrorCode } from '../errors/catalog.js';
import type { Operation } from './operation.js';
import { TRANSPORT as PLATFORM_TRANSPORT } from './platform-operations.js';
import { MIGRATION_GUIDE_PATH } from './platform-operations.js';
import { GRAPHIQL_ASSET_PATH } from './graphiql-operations.js';

export const DOCS_PAGE_PATH = '/docs';
export const DOCS_ASSET_PATH = '/docs/assets/:asset';
export const DOCS_CHANGELOG_PATH = '/docs/changelog';

/**
 * The documentation paths: pages for people, answered in their own media type whatever Accept says (like a
 * migration guide), so a browser's `Accept: text/html` is not 406. GraphiQL's files too; its page is `/graphql`'s
 * (src/http/graphql/graphiql-routes.ts wantsGraphiql).
 */
export const DOCUMENTATION_PATHS: ReadonlySet<string> = new Set([DOCS_PAGE_PATH, DOCS_ASSET_PATH, DOCS_CHANGELOG_PATH, MIGRATION_GUIDE_PATH, GRAPHIQL_ASSET_PATH]);

/** The files under /docs/assets: the renderer (Redoc's standalone bundle, its licences) and the page's own script and style. */
export const DOCS_ASSETS = ['redoc.standalone.js', 'redoc.standalone.js.LICENSE.txt', 'redoc.LICENSE', 'docs.js', 'docs.css'] as const;
export type DocsAsset = (typeof DOCS_ASSETS)[number];

/** The transport failures but NOT_ACCEPTABLE: documentation paths answer whatever Accept asks (DOCUMENTATION_PATHS). */
const TRANSPORT: ErrorCode[] = PLATFORM_TRANSPORT.filter((c) => c !== 'NOT_ACCEPTABLE');

const CONDITIONAL = { type: 'object', properties: { 'if-none-match': { type: 'string' } } } as const;

/** The reference page of every served version (newest first), the assets it loads and the changelog. */
export function docsOperations(versions: readonly string[]): Operation[] {
  const none = { authentication: 'none' as const, grants: [], scopes: [], csrf: false, idempotent: false, kind: 'platform' as const, method: 'GET' as const };
  return [
    {
      ...none,
      id: 'docs.reference',
      path: DOCS_PAGE_PATH,
      input: {
        query: {
          type: 'object',
          additionalProperties: false,
          properties: {
            version: {
              type: 'string',
              // The spellings the version selector takes (`2` or `v2`).
              enum: [...versions, ...versions.map((v) => v.slice(1))],
              description: `The version to show; the newest (${versions[0]}) when absent.`,
            },
          },
        },
        headers: CONDITIONAL,
      },
      output: { 200: { type: 'string', description: 'The reference, as HTML (text/html) rendered in the browser by Redoc from the version’s OpenAPI document.' }, 304: null },
      produces: ['text/html'],
      errors: [...TRANSPORT, 'INVALID_QUERY', 'UNSUPPORTED_VERSION', 'RATE_LIMITED'],
      summary: 'The API reference, for people',
      description:
        'An HTML reference of one version rendered from its OpenAPI document, with a version switcher and links to the migration guides and the changelog. Every script and style it loads is served here: it works offline and contacts no other host. Public; a strong ETag.',
    },
    {
      ...none,
      id: 'docs.asset',
      path: DOCS_ASSET_PATH,
      input: {
        path: { type: 'object', required: ['asset'], properties: { asset: { type: 'string', enum: [...DOCS_ASSETS] } } },
        query: {
          type: 'object',
          additionalProperties: false,
          properties: { v: { type: 'string', description: 'The fingerprint the reference page puts on the URL: with the current one the asset is cacheable for a year.' } },
        },
        headers: CONDITIONAL,
      },
      output: { 200: { type: 'string', description: 'The file: JavaScript, CSS or a licence text.' }, 304: null },
      produces: ['text/javascript', 'text/css', 'text/plain'],
      errors: [...TRANSPORT, 'INVALID_QUERY', 'ROUTE_NOT_FOUND', 'RATE_LIMITED'],
      summary: 'A file of the reference page',
      description: 'A script, style sheet or licence the reference page loads (`redoc.standalone.js`, `docs.js`, `docs.css`, the licences). Public; a strong ETag.',
    },
    {
      ...none,
      id: 'docs.changelog',
      path: DOCS_CHANGELOG_PATH,
      input: { headers: CONDITIONAL },
      output: { 200: { type: 'string', description: 'The changelog, as Markdown (text/markdown).' }, 304: null },
      produces: ['text/markdown'],
      errors: [...TRANSPORT, 'ROUTE_NOT_FOUND', 'RATE_LIMITED'],
      summary: 'The changelog',
      description: 'What changed in each release of this server, as Markdown. Public; a strong ETag.',
    },
  ];
}
