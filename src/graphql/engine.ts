// The GraphQL engine behind the HTTP layer (DESIGN §7, issue 29.2–5): a request's operation resolved, parsed, validated, bounded and charged before anything runs, then executed on the services.
import type { GraphQLError } from 'graphql';
import {
  execute,
  getOperationAST,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { Catalog } from '../catalog/catalog.js';
import { AppError, type ErrorFacts } from '../errors/app-error.js';
import { ERROR_CATALOG } from '../errors/catalog.js';
import type { Principal } from '../model/principal.js';
import type { IdempotentExecution } from '../services/idempotent.js';
import { measure, type Measure } from './bounds.js';
import { createContext, type EngineServices } from './context.js';
import { appErrorOf, formatFieldError, formatRequestError, type CanonFormattedError, type RequestError } from './errors.js';
import { beginKeyed } from './keyed.js';
import { queryHash, type PersistedQueries } from './persisted.js';
import type { GraphqlParams } from './request.js';
import { buildSchema } from './schema.js';

/** The limits and switches of the engine (src/config/config.ts: CANON_GRAPHQL_*). */
export interface EngineOptions {
  maxDepth: number;
  maxCost: number;
  /** `__schema` and `__type` answered (off in production by default). */
  introspection: boolean;
  persisted: PersistedQueries;
  /** The cost one request of the rate limit stands for: an operation counts ceil(cost / this) requests, at least one. */
  costPerRequest: number;
}

/** The media types a response is sent in (GraphQL over HTTP §6.4): the newer one makes request errors 4xx. */
export type ResponseMedia = 'application/graphql-response+json' | 'application/json';

export interface EngineRequest {
  method: 'GET' | 'POST';
  params: GraphqlParams;
  principal: Principal;
  media: ResponseMedia;
  idempotencyKey: string | undefined;
  /**
   * Counts `units` more requests against the caller's rate limit (its arrival counted one): throws RATE_LIMITED,
   * with its facts, when the limit refuses them.
   */
  charge(units: number): Promise<void>;
  /** Told of failures that are bugs, not answers (logged with the request id). */
  internal(cause: unknown): void;
}

export interface EngineResponse {
  status: number;
  /** The GraphQL response as JSON text. */
  body: string;
  /** Facts of the errors for headers (Retry-After, WWW-Authenticate, X-RateLimit-*). */
  facts: ErrorFacts;
  /** A stored response sent again under its Idempotency-Key. */
  replayed: boolean;
}

/** The longest document parsed (graphql-js `maxTokens`): a pathological document is refused before it costs memory. */
const MAX_TOKENS = 20_000;

/** Valid documents kept by their text; when full, it starts over (as REST's list plans, src/http/list-plans.ts). */
const MAX_DOCUMENTS = 1_000;

export class GraphqlEngine {
  readonly schema: GraphQLSchema;
  private readonly rules: readonly ValidationRule[];
  private readonly documents = new Map<string, DocumentNode>();

  constructor(
    private readonly deps: EngineServices & { catalog: Catalog; idempotency: IdempotentExecution },
    private readonly options: EngineOptions,
  ) {
    this.schema = buildSchema(deps.model, deps.catalog);
    this.rules = options.introspection ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
  }

  /**
   * Answers one request. Throws an AppError for what is no GraphQL request to answer in GraphQL's shape: a
   * mutation sent by GET (405, nothing runs) or a malformed Idempotency-Key (400); the HTTP layer sends those in
   * the uniform error body. Everything else is a GraphQL response.
   */
  async handle(req: EngineRequest): Promise<EngineResponse> {
    const source = this.sourceOf(req.params);
    if (typeof source !== 'string') return this.refused(req, [source]);
    const checked = this.checkedDocument(source);
    if ('refusals' in checked) return this.refused(req, checked.refusals);
    const { document } = checked;
    const operation = getOperationAST(document, req.params.operationName ?? undefined);
    // GraphQL over HTTP §5.2: GET is for queries; a mutation there is 405 and runs nothing (DESIGN §7).
    if (req.method === 'GET' && operation && operation.operation !== 'query') {
      throw new AppError('METHOD_NOT_ALLOWED', `A ${operation.operation} is sent with POST; GET runs queries only.`, { headers: { allow: 'POST' } });
    }
    if (checked.invalid) return this.refused(req, checked.invalid);
    if (!operation) {
      const message = req.params.operationName
        ? `The document has no operation named ${req.params.operationName}.`
        : 'The document has several operations: name the one to run (operationName).';
      return this.refused(req, [{ error: new AppError('GRAPHQL_VALIDATION_FAILED', message) }]);
    }
    const variables = req.params.variables ?? {};
    const measured = measure(this.schema, document, operation, variables, this.options.maxDepth);
    const bounded = this.bounded(measured);
    if (bounded) return this.refused(req, [bounded]);
    const units = Math.max(1, Math.ceil(measured.cost / this.options.costPerRequest));
    try {
      if (units > 1) await req.charge(units - 1);
    } catch (err) {
      return this.refused(req, [{ error: appErrorOf(err).error }]);
    }
    if (operation.operation === 'mutation' && req.idempotencyKey !== undefined) return this.keyed(req, source, document);
    const result = await execute({
      schema: this.schema,
      document,
      operationName: req.params.operationName,
      variableValues: variables,
      contextValue: createContext(this.deps, req.principal),
    });
    return this.answer(req, result);
  }

  /**
   * The document of a query text, parsed and validated against the schema: a valid one is kept (clients send the
   * same few operations again and again, and validation was four fifths of the engine's time per request). Only
   * valid documents are kept, never refusals (cheap to make again; they would let bad documents fill the memo).
   * A document is pure data of its text: the schema and the rules are fixed for the engine's life.
   */
  private checkedDocument(source: string): { document: DocumentNode; invalid?: RequestError[] } | { refusals: RequestError[] } {
    const kept = this.documents.get(source);
    if (kept) return { document: kept };
    let document: DocumentNode;
    try {
      document = parse(source, { maxTokens: MAX_TOKENS });
    } catch (err) {
      const e = err as GraphQLError;
      return { refusals: [{ error: new AppError('GRAPHQL_PARSE_FAILED', e.message), ...(e.locations ? { locations: e.locations } : {}) }] };
    }
    const invalid = validate(this.schema, document, this.rules, { maxErrors: 25 });
    if (invalid.length > 0) {
      return { document, invalid: invalid.map((e) => ({ error: new AppError('GRAPHQL_VALIDATION_FAILED', e.message), ...(e.locations ? { locations: e.locations } : {}) })) };
    }
    if (this.documents.size >= MAX_DOCUMENTS) this.documents.clear();
    this.documents.set(source, document);
    return { document };
  }

  /** The query to run: the text sent, or the registered one its persisted-query hash names (checked against the text when both come). */
  private sourceOf(params: GraphqlParams): string | RequestError {
    const persisted = params.extensions?.persistedQuery as { version?: unknown; sha256Hash?: unknown } | undefined;
    if (persisted === undefined) return params.query!;
    if (persisted.version !== 1 || typeof persisted.sha256Hash !== 'string') {
      return {
        error: new AppError('BAD_REQUEST', 'extensions.persistedQuery takes {version: 1, sha256Hash}.', {
          details: [{ field: 'extensions.persistedQuery', message: 'must be {version: 1, sha256Hash}' }],
        }),
      };
    }
    const hash = persisted.sha256Hash.toLowerCase();
    if (params.query !== undefined) {
      if (queryHash(params.query) !== hash)
        return {
          error: new AppError('BAD_REQUEST', 'The sha256Hash is not the SHA-256 of the query sent.', {
            details: [{ field: 'extensions.persistedQuery.sha256Hash', message: 'must be the SHA-256 of query', value: persisted.sha256Hash }],
          }),
        };
      return params.query;
    }
    // Apollo's clients look for this message to send the query itself.
    return this.options.persisted.get(hash) ?? { error: new AppError('PERSISTED_QUERY_NOT_FOUND', 'PersistedQueryNotFound') };
  }

  /** Depth and cost against the limits; the refusal says which and by how much. */
  private bounded(m: Measure): RequestError | undefined {
    const { maxDepth, maxCost } = this.options;
    const details = [
      ...(m.depth > maxDepth ? [{ field: 'depth', message: `is more than ${maxDepth}, the deepest an operation may nest`, value: m.depth }] : []),
      ...(m.cost > maxCost ? [{ field: 'cost', message: `is more than ${maxCost}: each object field counts 1, a paged field's selection \`first\` times`, value: m.cost }] : []),
    ];
    if (details.length === 0) return undefined;
    return {
      error: new AppError(
        'QUERY_TOO_COMPLEX',
        `The operation is ${details.map((d) => `${d.field} ${String(d.value)}`).join(' and ')}; the limits are depth ${maxDepth} and cost ${maxCost}. Nothing ran.`,
        { details },
      ),
    };
  }

  /**
   * Mutations under an Idempotency-Key (DESIGN §11): the whole operation runs in one transaction that every
   * mutation joins, its reads included, and the key's record commits in it with the whole response; an answer
   * with any error commits nothing (src/services/keyed-batch.ts, docs/graphql.md "Idempotency").
   */
  private async keyed(req: EngineRequest, source: string, document: DocumentNode): Promise<EngineResponse> {
    const batch = beginKeyed(this.deps.idempotency, req.principal, req.idempotencyKey!, {
      query: source,
      variables: req.params.variables,
      operationName: req.params.operationName,
    });
    try {
      let answered: EngineResponse | undefined;
      await batch.run(
        (fn) => this.deps.services.commit(fn),
        async (tx) => {
          const result = await execute({
            schema: this.schema,
            document,
            operationName: req.params.operationName,
            variableValues: req.params.variables ?? {},
            contextValue: createContext(this.deps, req.principal, tx, batch),
          });
          if (batch.replay) return undefined;
          // Any error rolls the whole request back: `data: null` then, as none of it was applied.
          if (result.errors?.length) {
            answered = this.answer(req, { errors: result.errors, data: null });
            return undefined;
          }
          answered = this.answer(req, result);
          return { status: 200, headers: {}, body: answered.body };
        },
      );
      if (batch.replay) return { status: 200, body: batch.replay.body, facts: {}, replayed: true };
      return answered!;
    } catch (err) {
      // Decided once the transaction has ended: the key held another request (422), or a race left it in use (409).
      const { error, internal } = appErrorOf(err);
      if (internal) throw err;
      return this.refused(req, [{ error }]);
    } finally {
      batch.release();
    }
  }

  /** An executed operation's response: `data` is there, so the status is 200 whatever the errors (GraphQL over HTTP §6.4.2). */
  private answer(req: EngineRequest, result: ExecutionResult): EngineResponse {
    let facts: ErrorFacts = {};
    const errors: CanonFormattedError[] = (result.errors ?? []).map((e) => {
      // Without data nothing ran: variables that do not fit the operation stopped it (a scalar's refusal is their original error).
      if (result.data === undefined) return formatRequestError({ error: new AppError('GRAPHQL_VALIDATION_FAILED', e.message), ...(e.locations ? { locations: e.locations } : {}) });
      const f = formatFieldError(e, req.internal);
      // Of a field's error only the wait says something about the response (a 200 challenges nobody to authenticate).
      if (f.facts.retryAfterSeconds !== undefined && facts.retryAfterSeconds === undefined) facts = { retryAfterSeconds: f.facts.retryAfterSeconds };
      return f.error;
    });
    const body = JSON.stringify({ ...(errors.length ? { errors } : {}), ...(result.data !== undefined ? { data: result.data } : {}) });
    if (result.data === undefined) return { status: this.statusOf(req, errors[0]?.extensions.code), body, facts, replayed: false };
    return { status: 200, body, facts, replayed: false };
  }

  /** A request that ran nothing: `errors` alone. */
  private refused(req: EngineRequest, errors: RequestError[]): EngineResponse {
    const facts = errors.reduce<ErrorFacts>((all, e) => ({ ...e.error.facts, ...all }), {});
    return { status: this.statusOf(req, errors[0]?.error.code), body: JSON.stringify({ errors: errors.map(formatRequestError) }), facts, replayed: false };
  }

  /**
   * GraphQL over HTTP §6.4: under `application/json` every well-formed request is 200 (DESIGN §7: errors travel in
   * the body); under `application/graphql-response+json` a response without `data` must be 4xx or 5xx: the
   * catalog's status of its first error (400 for a document refused, 429 over the rate limit).
   */
  private statusOf(req: EngineRequest, code: keyof typeof ERROR_CATALOG | undefined): number {
    if (req.media === 'application/json' || code === undefined) return 200;
    return ERROR_CATALOG[code].status;
  }
}
