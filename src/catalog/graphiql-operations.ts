// The files of the GraphiQL page (issue 29.7) as a catalog operation: the page itself is `GET /graphql` asked for by a browser (graphql.query); its scripts and styles are served here, public.
import type { ErrorCode } from '../errors/catalog.js';
import type { Operation } from './operation.js';
import { TRANSPORT as PLATFORM_TRANSPORT } from './platform-operations.js';

export const GRAPHIQL_ASSET_PATH = '/graphql/assets/:asset';

/**
 * The files under /graphql/assets: React and ReactDOM's UMD builds, GraphiQL's bundle and style sheet (the
 * devDependencies' files, copied by scripts/build.mjs), their licences, and the page's own script and style.
 */
export const GRAPHIQL_ASSETS = [
  'react.production.min.js',
  'react-dom.production.min.js',
  'graphiql.min.js',
  'graphiql.min.css',
  'react.LICENSE',
  'react-dom.LICENSE',
  'graphiql.LICENSE',
  'graphiql-page.js',
  'graphiql-page.css',
] as const;
export type GraphiqlAsset = (typeof GRAPHIQL_ASSETS)[number];

/** The transport failures but NOT_ACCEPTABLE: a script or style sheet answers whatever Accept asks (DOCUMENTATION_PATHS). */
const TRANSPORT: ErrorCode[] = PLATFORM_TRANSPORT.filter((c) => c !== 'NOT_ACCEPTABLE');

export function graphiqlOperations(): Operation[] {
  return [
    {
      id: 'graphql.asset',
      method: 'GET',
      path: GRAPHIQL_ASSET_PATH,
      kind: 'platform',
      authentication: 'none',
      grants: [],
      scopes: [],
      csrf: false,
      idempotent: false,
      input: {
        path: { type: 'object', required: ['asset'], properties: { asset: { type: 'string', enum: [...GRAPHIQL_ASSETS] } } },
        query: {
          type: 'object',
          additionalProperties: false,
          properties: { v: { type: 'string', description: 'The fingerprint the GraphiQL page puts on the URL: with the current one the file is cacheable for a year.' } },
        },
        headers: { type: 'object', properties: { 'if-none-match': { type: 'string' } } },
      },
      output: { 200: { type: 'string', description: 'The file: JavaScript, CSS or a licence text.' }, 304: null },
      produces: ['text/javascript', 'text/css', 'text/plain'],
      errors: [...TRANSPORT, 'INVALID_QUERY', 'ROUTE_NOT_FOUND', 'RATE_LIMITED'],
      summary: 'A file of the GraphiQL page',
      description:
        'A script, style sheet or licence the GraphiQL page (`GET /graphql` from a browser) loads: React, ReactDOM, GraphiQL, their licences and the page’s own script and style. Public; a strong ETag.',
    },
  ];
}
