// The GraphQL endpoint as catalog operations (DESIGN §7, GraphQL over HTTP): `GET /graphql` for queries, `POST /graphql` for any operation.
import type { ErrorCode } from '../errors/catalog.js';
import type { JsonSchema } from '../model/schema.js';
import type { Operation } from './operation.js';
import { TRANSPORT } from './platform-operations.js';

export const GRAPHQL_PATH = '/graphql';

/** The media types a GraphQL response is sent in, the newer first (GraphQL over HTTP §6.4). */
export const GRAPHQL_MEDIA_TYPES = ['application/graphql-response+json', 'application/json'];

const GRAPHQL_ERROR: JsonSchema = {
  type: 'object',
  required: ['message', 'extensions'],
  properties: {
    message: { type: 'string' },
    locations: { type: 'array', items: { type: 'object', required: ['line', 'column'], properties: { line: { type: 'integer' }, column: { type: 'integer' } } } },
    path: { type: 'array', items: { type: ['string', 'integer'] } },
    extensions: {
      type: 'object',
      required: ['code'],
      properties: {
        code: { type: 'string', description: 'A code of the error catalog (docs/errors.md).' },
        details: { type: 'array', items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' }, value: {} } } },
      },
    },
  },
};

/** A GraphQL response (GraphQL spec §7.1): `data`, and `errors` when any, each carrying the catalog's code. */
export const GRAPHQL_RESPONSE: JsonSchema = {
  type: 'object',
  anyOf: [{ required: ['data'] }, { required: ['errors'] }],
  properties: {
    data: { type: ['object', 'null'], description: 'The result; absent when the request ran nothing (it was refused).' },
    errors: { type: 'array', minItems: 1, items: GRAPHQL_ERROR },
  },
};

/** The page a browser gets (src/http/graphql/graphiql-routes.ts): public, served whole by this server. */
const GRAPHIQL_PAGE: JsonSchema = {
  type: 'string',
  description: 'GraphiQL, an in-browser GraphQL IDE, as HTML (text/html): its scripts and styles come from `/graphql/assets/`, never from another host.',
};

const GRAPHIQL_NOTE =
  'Without a `query` parameter (or any other) and with an `Accept` that prefers `text/html` (a browser), the answer is the GraphiQL page instead: public (no credentials needed to load it; its requests carry the browser’s session, or the headers typed into its Headers tab), with a strong ETag. HEAD answers as GET.';

/** Codes a GraphQL error may carry about the request as a whole: errors of a field are any code of the catalog. */
const REQUEST: ErrorCode[] = ['UNAUTHENTICATED', 'RATE_LIMITED', 'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'QUERY_TOO_COMPLEX', 'PERSISTED_QUERY_NOT_FOUND'];

const PARAMS = {
  query: { type: 'string', description: 'The GraphQL document.' },
  operationName: { type: 'string', description: 'Which operation of the document to run, when it has several.' },
};

const DESCRIPTION =
  'The GraphQL API (docs/graphql.md, schema in docs/schema.graphql): the same resources, permissions, services and events as REST. ' +
  'Errors of the document and of fields travel in the body with `extensions.code` from the error catalog: with HTTP 200 under `application/json`; under ' +
  '`application/graphql-response+json` a response that ran nothing (no `data`) has its error’s status, and refusals before it (credentials, CSRF, rate limit) are in GraphQL’s shape too. ' +
  'A request that is no GraphQL request (no query, not JSON) is 400 in the uniform error body. ' +
  'With `Accept: text/event-stream` the operation is answered over Server-Sent Events (subscriptions: `events(after:, types:)`, `orderEvents(id:)`…); a subscription sent for JSON is refused (`NOT_ACCEPTABLE`) and runs nothing.';

const STREAM =
  'GraphQL over Server-Sent Events (graphql-sse, distinct connections mode): a subscription’s events each as `id: <event id>`, `event: next`, `data: {"data":…}`, ' +
  'resumed after `Last-Event-ID` (or the field’s `after`); any other operation as one `next`; then `event: complete`. Heartbeat comments as `/events`’ stream; the same stream caps (429).';

export function graphqlOperations(): Operation[] {
  const common = {
    authentication: 'required' as const,
    grants: ['authenticated'],
    scopes: [],
    kind: 'platform' as const,
    path: GRAPHQL_PATH,
    // With `Accept: text/event-stream`: GraphQL over SSE (graphql-sse's distinct connections mode), subscriptions included.
    produces: [...GRAPHQL_MEDIA_TYPES, 'text/event-stream'],
    streamDescription: STREAM,
    // Under the newer media type a request refused before or instead of running answers in GraphQL's shape.
    errorContent: { 'application/graphql-response+json': GRAPHQL_RESPONSE },
  };
  return [
    {
      ...common,
      id: 'graphql.query',
      method: 'GET',
      csrf: false,
      idempotent: false,
      input: {
        query: {
          type: 'object',
          // Absent: a browser gets the GraphiQL page (below); any other client 400.
          properties: {
            ...PARAMS,
            variables: { type: 'string', description: 'The variables, as JSON text.' },
            extensions: { type: 'string', description: 'Extensions as JSON text (`persistedQuery`).' },
          },
        },
      },
      produces: [...GRAPHQL_MEDIA_TYPES, 'text/html'],
      successContent: { 'text/html': GRAPHIQL_PAGE },
      // 304: the GraphiQL page revalidated by its ETag; a GraphQL answer is never 304.
      output: { 200: GRAPHQL_RESPONSE, 304: null },
      errors: [...TRANSPORT, ...REQUEST, 'METHOD_NOT_ALLOWED'],
      summary: 'A GraphQL query, or GraphiQL in a browser',
      description: `${DESCRIPTION} GET runs queries only: a mutation is 405 and runs nothing. ${GRAPHIQL_NOTE}`,
    },
    {
      ...common,
      id: 'graphql.execute',
      method: 'POST',
      csrf: true,
      idempotent: true,
      input: {
        headers: {
          type: 'object',
          properties: {
            'idempotency-key': {
              type: 'string',
              minLength: 1,
              maxLength: 255,
              description: 'For a request carrying mutations: they commit together, and a repeat gets the first response again.',
            },
          },
        },
        body: {
          'application/json': {
            type: 'object',
            properties: {
              ...PARAMS,
              variables: { type: ['object', 'null'] },
              extensions: { type: ['object', 'null'], description: 'Apollo’s `persistedQuery: {version: 1, sha256Hash}` names a registered query.' },
            },
          },
        },
      },
      output: { 200: GRAPHQL_RESPONSE },
      errors: [
        ...TRANSPORT,
        'UNSUPPORTED_MEDIA_TYPE',
        'PAYLOAD_TOO_LARGE',
        'INVALID_JSON',
        'EXPECTATION_FAILED',
        'CSRF_TOKEN_INVALID',
        ...REQUEST,
        // The Idempotency-Key refuses the request as a whole (src/services/keyed-batch.ts), as REST's 409 and 422.
        'IDEMPOTENCY_KEY_IN_USE',
        'IDEMPOTENCY_KEY_REUSED',
      ],
      summary: 'A GraphQL operation',
      description: `${DESCRIPTION} A request carrying mutations may send an Idempotency-Key: its mutations commit together or not at all, and a repeat gets the first response again.`,
    },
  ];
}
