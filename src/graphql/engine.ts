// The GraphQL engine behind the HTTP layer (DESIGN §7, issue 29.2–5): a request's operation resolved, parsed, validated, bounded and charged before anything runs, then executed on the services.
import type { GraphQLError } from 'graphql';
import {
  createSourceEventStream,
  execute,
  executeSync,
  getOperationAST,
  getVariableValues,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from 'graphql';
import type { Catalog } from '../catalog/catalog.js';
import { AppError, type ErrorFacts } from '../errors/app-error.js';
import { ERROR_CATALOG } from '../errors/catalog.js';
import type { Principal } from '../model/principal.js';
import type { IdempotentExecution } from '../services/idempotent.js';
import type { StoredEvent } from '../store/types.js';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { AnswerCache } from './answer-cache.js';
import { measure, type Measure } from './bounds.js';
import { createContext, type EngineServices } from './context.js';
import { appErrorOf, formatFieldError, formatRequestError, type CanonFormattedError, type RequestError } from './errors.js';
import { beginKeyed } from './keyed.js';
import { queryHash, type PersistedQueries } from './persisted.js';
import type { GraphqlParams } from './request.js';
import { buildSchema } from './schema.js';
import { LogSubscription } from './subscriptions.js';

/** The limits and switches of the engine (src/config/config.ts: CANON_GRAPHQL_*). */
export interface EngineOptions {
  maxDepth: number;
  maxCost: number;
  /** `__schema` and `__type` answered (off in production by default). */
  introspection: boolean;
  persisted: PersistedQueries;
  /** The cost one request of the rate limit stands for: an operation counts ceil(cost / this) requests, at least one. */
  costPerRequest: number;
  /** Answers to queries kept per caller until the data changes (src/graphql/answer-cache.ts). */
  answerCache: boolean;
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
  /** A subscription's reconnection (the `Last-Event-ID` header): it resumes after that event. */
  lastEventId?: string;
  /** When the request arrived (performance.now()): the store read authentication waited for may stamp kept answers (Store.readStamp). */
  since?: number;
}

/** A GraphQL response as an object (GraphQL spec §7.1), its errors in Canon's shape. */
export interface FormattedResult {
  errors?: CanonFormattedError[];
  data?: unknown;
}

/**
 * The answer to an operation sent for a stream (GraphQL over SSE, src/http/graphql/graphql-sse.ts): one result
 * for a query, a mutation or a refusal (sent as one `next`, then `complete`), or a subscription to the event log
 * with what renders each of its events.
 */
export type StreamAnswer = { result: FormattedResult } | { subscription: LogSubscription; render: (event: StoredEvent) => FormattedResult };

/** A request whose operation was resolved, parsed, validated, bounded and charged: ready to run. */
interface Ready {
  source: string;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  variables: Record<string, unknown>;
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

/** An operation run once by graphql-js, to be compiled when it comes again (GraphqlEngine.compiledOf). */
const SEEN_ONCE = Symbol('seen once');

/** Valid documents kept by their text; when full, it starts over (as REST's list plans, src/http/list-plans.ts). */
const MAX_DOCUMENTS = 1_000;

export class GraphqlEngine {
  readonly schema: GraphQLSchema;
  private readonly rules: readonly ValidationRule[];
  private readonly documents = new Map<string, DocumentNode>();
  /** Operations compiled to functions (graphql-jit), by text and operation name, or marked as run once. */
  private readonly compiled = new Map<string, CompiledQuery | typeof SEEN_ONCE>();
  /** Depth and cost of operations without variables, by their node in a kept document (GraphqlEngine.measured). */
  private readonly measures = new WeakMap<OperationDefinitionNode, Measure>();
  /** Answers to queries, until the data changes; undefined when switched off (CANON_GRAPHQL_ANSWER_CACHE=off). */
  readonly answers: AnswerCache | undefined;

  constructor(
    private readonly deps: EngineServices & { catalog: Catalog; idempotency: IdempotentExecution },
    private readonly options: EngineOptions,
  ) {
    this.schema = buildSchema(deps.model, deps.catalog);
    this.rules = options.introspection ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
    this.answers = options.answerCache ? new AnswerCache() : undefined;
  }

  /**
   * Answers one request. Throws an AppError for what is no GraphQL request to answer in GraphQL's shape: a
   * mutation sent by GET (405, nothing runs) or a malformed Idempotency-Key (400); the HTTP layer sends those in
   * the uniform error body. Everything else is a GraphQL response.
   */
  async handle(req: EngineRequest): Promise<EngineResponse> {
    return this.respond(req);
  }

  /**
   * As `handle`, but answered at once, without a promise, when nothing has to wait: the document and its measure
   * kept, a charge of one request (counted on arrival), and an answer kept (src/graphql/answer-cache.ts) under a
   * stamp the store tells from memory. Throws, rather than rejects, what `handle` rejects.
   */
  respond(req: EngineRequest): EngineResponse | Promise<EngineResponse> {
    const prepared = this.prepared(req, false);
    if ('refusals' in prepared) return this.refused(req, prepared.refusals);
    if (prepared.units === 1) return this.run(req, prepared);
    return this.charged(req, prepared).then((ready) => ('refusals' in ready ? this.refused(req, ready.refusals) : this.run(req, ready)));
  }

  /**
   * Answers one request sent for a stream (`Accept: text/event-stream`): a subscription becomes a subscription to
   * the log, its field errors (an unknown type, an `after` no kept event has) one result; any other operation runs
   * as `handle` runs it, under the same bounds, charge and Idempotency-Key.
   */
  async stream(req: EngineRequest): Promise<StreamAnswer> {
    const ready = await this.ready(req, true);
    if ('refusals' in ready) return { result: JSON.parse(this.refused(req, ready.refusals).body) as FormattedResult };
    if (ready.operation.operation !== 'subscription') return { result: JSON.parse((await this.run(req, ready)).body) as FormattedResult };
    const args = {
      schema: this.schema,
      document: ready.document,
      operationName: req.params.operationName,
      variableValues: ready.variables,
      contextValue: { ...createContext(this.deps, req.principal), ...(req.lastEventId !== undefined ? { lastEventId: req.lastEventId } : {}) },
    };
    const source = await createSourceEventStream(args);
    if (!(source instanceof LogSubscription)) {
      // The source stream could not be made: a request error (GraphQL spec §6.3.1), no data. An error with a path is
      // the field's own (its arguments, the caller's visibility); one without is the variables' coercion.
      const failed = source as ExecutionResult;
      return {
        result: {
          errors: (failed.errors ?? []).map((e) =>
            e.path
              ? formatFieldError(e, req.internal).error
              : formatRequestError({ error: new AppError('GRAPHQL_VALIDATION_FAILED', e.message), ...(e.locations ? { locations: e.locations } : {}) }),
          ),
        },
      };
    }
    // Every field of Event resolves synchronously from the event: each is rendered in the step the hub sends it.
    return { subscription: source, render: (event) => this.formatted(req, executeSync({ ...args, rootValue: event })).result };
  }

  /** Resolves, parses, validates, bounds and charges the operation; refusals run nothing. Throws 405 for a mutation by GET. */
  private async ready(req: EngineRequest, streaming: boolean): Promise<Ready | { refusals: RequestError[] }> {
    const prepared = this.prepared(req, streaming);
    return 'refusals' in prepared ? prepared : this.charged(req, prepared);
  }

  /** Counts the requests an operation's cost stands for beyond the one its arrival counted; over the limit is a refusal. */
  private async charged(req: EngineRequest, prepared: Ready & { units: number }): Promise<Ready | { refusals: RequestError[] }> {
    try {
      if (prepared.units > 1) await req.charge(prepared.units - 1);
    } catch (err) {
      return { refusals: [{ error: appErrorOf(err).error }] };
    }
    return prepared;
  }

  /** Resolves, parses, validates and bounds the operation, and says what it costs (in requests); refusals run nothing. Throws 405 for a mutation by GET. */
  private prepared(req: EngineRequest, streaming: boolean): (Ready & { units: number }) | { refusals: RequestError[] } {
    const source = this.sourceOf(req.params);
    if (typeof source !== 'string') return { refusals: [source] };
    const checked = this.checkedDocument(source);
    if ('refusals' in checked) return { refusals: checked.refusals };
    const { document } = checked;
    const operation = getOperationAST(document, req.params.operationName ?? undefined);
    // GraphQL over HTTP §5.2: GET is for queries; a mutation there is 405 and runs nothing (DESIGN §7). A subscription by
    // GET is what a browser's EventSource sends: served as a stream, refused below as JSON.
    if (req.method === 'GET' && operation && operation.operation === 'mutation') {
      throw new AppError('METHOD_NOT_ALLOWED', `A ${operation.operation} is sent with POST; GET runs queries only.`, { headers: { allow: 'POST' } });
    }
    if (checked.invalid) return { refusals: checked.invalid };
    if (!operation) {
      const message = req.params.operationName
        ? `The document has no operation named ${req.params.operationName}.`
        : 'The document has several operations: name the one to run (operationName).';
      return { refusals: [{ error: new AppError('GRAPHQL_VALIDATION_FAILED', message) }] };
    }
    // A subscription's answer is a stream of events (GraphQL over SSE); a JSON response can carry none of it.
    if (operation.operation === 'subscription' && !streaming) {
      return {
        refusals: [
          {
            error: new AppError('NOT_ACCEPTABLE', 'A subscription is answered as a stream of events: send it with `Accept: text/event-stream` (GraphQL over SSE). Nothing ran.'),
          },
        ],
      };
    }
    const variables = req.params.variables ?? {};
    const measured = this.measured(document, operation, variables);
    const bounded = this.bounded(measured);
    if (bounded) return { refusals: [bounded] };
    const units = Math.max(1, Math.ceil(measured.cost / this.options.costPerRequest));
    return { source, document, operation, variables, units };
  }

  /**
   * The operation's depth and cost. An operation without variables measures the same every time: kept with its
   * (kept) document, so a repeated one is not walked again.
   */
  private measured(document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>): Measure {
    const fixed = (operation.variableDefinitions ?? []).length === 0;
    const known = fixed ? this.measures.get(operation) : undefined;
    if (known !== undefined) return known;
    const measured = measure(this.schema, document, operation, variables, this.options.maxDepth);
    if (fixed) this.measures.set(operation, measured);
    return measured;
  }

  /** Runs a query or mutation that is ready (a keyed mutation under its Idempotency-Key); a query's kept answer at once. */
  private run(req: EngineRequest, ready: Ready): EngineResponse | Promise<EngineResponse> {
    const { source, document, operation } = ready;
    if (operation.operation === 'mutation' && req.idempotencyKey !== undefined) return this.keyed(req, source, document);
    if (operation.operation !== 'query' || this.answers === undefined) return this.execute(req, ready);
    const key = this.answers.keyOf(req.principal, document, req.params.operationName, ready.variables);
    if (key === undefined || this.answers.first(key)) return this.execute(req, ready);
    const stamp = this.deps.services.readStamp(req.since);
    return stamp instanceof Promise ? stamp.then((s) => this.throughAnswers(req, ready, key, s)) : this.throughAnswers(req, ready, key, stamp);
  }

  /** A query through the answer cache: the answer kept under `stamp`, else run (and kept when asked for before under it). */
  private throughAnswers(req: EngineRequest, ready: Ready, key: string, stamp: number | string | undefined): EngineResponse | Promise<EngineResponse> {
    const answers = this.answers!;
    if (stamp === undefined) return this.execute(req, ready);
    const kept = answers.get(stamp, key);
    if (kept !== undefined) return { status: 200, body: kept, facts: {}, replayed: false };
    if (!answers.wanted(key)) return this.execute(req, ready);
    let clean = false;
    return this.execute(req, ready, (result) => (clean = result.data != null && !result.errors?.length)).then(async (response) => {
      if (clean) {
        const after = this.deps.services.readStamp();
        answers.keep(stamp, after instanceof Promise ? await after : after, key, response.body);
      }
      return response;
    });
  }

  /** Runs a query or an unkeyed mutation; `executed` sees the result before it is formatted. */
  private async execute(req: EngineRequest, { source, document, operation, variables }: Ready, executed?: (result: ExecutionResult) => void): Promise<EngineResponse> {
    const result = await this.compiledOf(source, document, req.params.operationName).query(undefined, createContext(this.deps, req.principal), variables);
    // Variables that do not fit stop a run before any field (no data). graphql-jit words that refusal otherwise than
    // graphql-js, so it is made again by graphql-js: refusals read the same before and after the operation is
    // compiled, and a request whose variables fit is coerced once, not twice.
    if (result.data === undefined && operation.variableDefinitions?.length) {
      const coerced = getVariableValues(this.schema, operation.variableDefinitions, variables, { maxErrors: 25 });
      if (coerced.errors) return this.answer(req, { errors: coerced.errors });
    }
    executed?.(result);
    return this.answer(req, result);
  }

  /**
   * The operation compiled to a function by graphql-jit (the executor Mercurius uses): graphql-js's `execute`
   * works out, per request, which fields each selection holds, their arguments and how to complete each value;
   * a compiled query did that once (docs/graphql.md, "Execution"). Compiling costs about twice a validation, so
   * an operation is compiled the second time it comes, never for a text sent once: a client varying its text
   * on every request (literals instead of variables) makes each one cost what it did under graphql-js alone.
   */
  private compiledOf(source: string, document: DocumentNode, operationName: string | null): CompiledQuery {
    const key = operationName === null ? source : `${operationName}\u0000${source}`;
    const kept = this.compiled.get(key);
    if (kept !== undefined && kept !== SEEN_ONCE) return kept;
    const compiled = kept === SEEN_ONCE ? compileQuery(this.schema, document, operationName ?? undefined, { disablingCapturingStackErrors: true }) : undefined;
    if (this.compiled.size >= MAX_DOCUMENTS) this.compiled.clear();
    // A document that validated compiles; were it not to, graphql-js answers it, as it does a first run.
    if (compiled !== undefined && isCompiledQuery(compiled)) {
      this.compiled.set(key, compiled);
      return compiled;
    }
    if (compiled === undefined) this.compiled.set(key, SEEN_ONCE);
    return {
      query: (root, context, variables) => execute({ schema: this.schema, document, operationName, variableValues: variables, rootValue: root, contextValue: context }),
      stringify: JSON.stringify,
    };
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
    const { result: body, facts } = this.formatted(req, result);
    if (result.data === undefined) return { status: this.statusOf(req, body.errors?.[0]?.extensions.code), body: JSON.stringify(body), facts, replayed: false };
    return { status: 200, body: JSON.stringify(body), facts, replayed: false };
  }

  /** An executed operation's result in Canon's shape, and the facts of its errors for headers. */
  private formatted(req: EngineRequest, result: ExecutionResult): { result: FormattedResult; facts: ErrorFacts } {
    let facts: ErrorFacts = {};
    const errors: CanonFormattedError[] = (result.errors ?? []).map((e) => {
      // Without data nothing ran: variables that do not fit the operation stopped it (a scalar's refusal is their original error).
      if (result.data === undefined) return formatRequestError({ error: new AppError('GRAPHQL_VALIDATION_FAILED', e.message), ...(e.locations ? { locations: e.locations } : {}) });
      const f = formatFieldError(e, req.internal);
      // Of a field's error only the wait says something about the response (a 200 challenges nobody to authenticate).
      if (f.facts.retryAfterSeconds !== undefined && facts.retryAfterSeconds === undefined) facts = { retryAfterSeconds: f.facts.retryAfterSeconds };
      return f.error;
    });
    return { result: { ...(errors.length ? { errors } : {}), ...(result.data !== undefined ? { data: result.data } : {}) }, facts };
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
