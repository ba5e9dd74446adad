// A lean path for `POST /graphql` (issue 29, Performance): the same authentication, rate limits, body rules, engine and bytes as the Fastify route, chosen from the headers before a byte of the body is read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Credentials } from '../../auth/authenticator.js';
import { rateLimited, setRateHeaders, type Verdict } from '../../limits/rate-limiter.js';
import type { Principal } from '../../model/principal.js';
import { paramsFromBody, type GraphqlParams } from '../../graphql/request.js';
import { deepFreeze } from '../../lib/deep-freeze.js';
import { recentMemo } from '../../lib/recent-memo.js';
import type { ResponseMedia } from '../../graphql/engine.js';
import type { HttpDeps } from '../deps.js';
import { verifiedCertificateSha256 } from '../transport/auth-hooks.js';
import { bodyText } from '../transport/body-parsers.js';
import { parseJsonBody } from '../transport/json-body.js';
import { writeLeanError } from '../transport/lean-error.js';
import { requestIdFrom } from '../transport/request-id.js';
import { wantsEventStream } from '../routes/event-routes.js';
import { engineRequestOf, graphqlAnswer, graphqlMediaOf, graphqlRefusal, type GraphqlHttpAnswer } from './graphql-routes.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** The route this path stands in for (src/catalog/graphql-operations.ts, `graphql.execute`). */
export const GRAPHQL_EXECUTE_PATH = '/graphql';

/** `application/json`, bare or with a UTF-8 charset: any other spelling goes to Fastify's parsers, which judge it. */
const PLAIN_JSON = /^application\/json\s*(?:;\s*charset\s*=\s*"?utf-?8"?\s*)?$/i;

/** What `match` let through: the headers bodies are read under (src/http/transport/body-parsers.ts). */
const PLAIN_JSON_HEADERS = { 'content-type': 'application/json' };

/** Bodies up to this many bytes have their parameters kept (FastGraphql.paramsOf): a GraphQL operation is a few hundred. */
const LONGEST_KEPT_BODY = 8_192;

/** A request this path takes, as its headers describe it: the response's media type. */
interface Taken {
  media: ResponseMedia;
  /** The body's declared length. */
  length: number;
  /** When the request arrived (performance.now()): see EngineRequest.since. */
  arrived: number;
}

/**
 * Serves `POST /graphql` with a JSON body of a declared length, from a caller with no cookie and no Idempotency-Key,
 * and hands every other request to Fastify: a cookie may carry a session (CSRF, renewal), a key's replay bookkeeping
 * and a stream (`Accept: text/event-stream`) are the route's, and so is every request whose headers Fastify's
 * hooks refuse (a framing, type, coding, size or Accept it does not take). Like the lean read path it never
 * half-handles a request: until it has authenticated the caller nothing has happened, so a failed
 * authentication (counted against the IP, answered in the route's shape) runs in Fastify from the start. Why it
 * exists: for a small operation Fastify's request, body parser, hooks and reply cost several times the engine's
 * work (docs/BENCHMARKS.md, issue 29).
 */
export class FastGraphql {
  /** Requests answered here, and why this path stands aside altogether (tests prove which path answered). */
  readonly stats: { served: number; declined: Record<string, string> } = { served: 0, declined: {} };
  private open = true;
  private underPressure: () => boolean = () => false;
  private readonly hsts: string | undefined;

  constructor(
    private readonly deps: HttpDeps,
    fixed: Record<string, string>,
  ) {
    this.hsts = fixed['strict-transport-security'];
    // Under the other strategies Fastify's rewrite reads the version a request names; /graphql is the same route.
    if (deps.config.versioning !== 'path') this.stats.declined['*'] = `CANON_VERSIONING=${deps.config.versioning}`;
  }

  /** Stops serving: a hook runs on the route that this path does not stand in for (src/http/transport/hook-registry.ts). */
  decline(reason: string): void {
    this.stats.declined['*'] ??= reason;
  }

  /** The overload check (DESIGN §11), known once the overload plugin is registered. */
  watchPressure(underPressure: () => boolean): void {
    this.underPressure = underPressure;
  }

  /** From shutdown on, Fastify answers everything (it refuses new requests while closing). */
  close(): void {
    this.open = false;
  }

  /** The server's request listener: this path when it applies, else `next`. */
  listener(next: Listener): Listener {
    return (req, res) => {
      const taken = this.match(req);
      if (taken === undefined) {
        next(req, res);
        return;
      }
      const credentials: Credentials = { headers: req.headers, cookies: {}, certificateSha256: verifiedCertificateSha256(req.socket) };
      const known = this.deps.auth.authenticatedNow(credentials);
      if (known !== undefined) {
        this.arrive(taken, known.principal, req, res);
        return;
      }
      // Nothing has happened if it fails: Fastify authenticates again, counts the failure against the IP and answers.
      this.deps.auth
        .authenticate(credentials)
        .then(
          ({ principal }) => this.arrive(taken, principal, req, res),
          () => next(req, res),
        )
        // A bug past that point must not become an unhandled rejection: the request gets the uniform 500.
        .catch((err: unknown) => {
          const requestId = requestIdFrom(req);
          this.fail(req, res, { 'x-content-type-options': 'nosniff', 'x-request-id': requestId }, requestId, err);
        });
    };
  }

  private match(req: IncomingMessage): Taken | undefined {
    if (req.method !== 'POST' || req.url !== GRAPHQL_EXECUTE_PATH || !this.open || this.deps.config.accessLog || this.stats.declined['*'] !== undefined) return undefined;
    const h = req.headers;
    if (h.cookie !== undefined || h['idempotency-key'] !== undefined || h['content-encoding'] !== undefined || h['transfer-encoding'] !== undefined) return undefined;
    if (h['content-type'] === undefined || !PLAIN_JSON.test(h['content-type'])) return undefined;
    // A declared length within the body limit; an empty body, an oversized one (413) or none is the parser's to answer.
    const declared = h['content-length'];
    if (declared === undefined || !/^[0-9]{1,9}$/.test(declared)) return undefined;
    const length = Number(declared);
    if (length === 0 || length > this.deps.config.bodyLimitBytes) return undefined;
    if (wantsEventStream(h.accept)) return undefined;
    const media = graphqlMediaOf(h.accept);
    if (media === undefined || this.underPressure()) return undefined;
    // Taken before authentication's store read, and only for requests this path serves.
    return { media, length, arrived: performance.now() };
  }

  /** An authenticated caller: its arrival counted as the route's onRequest counts it, then its body read. */
  private arrive(taken: Taken, principal: Principal, req: IncomingMessage, res: ServerResponse): void {
    const requestId = requestIdFrom(req);
    // A literal, not a spread of the fixed headers (V8 gives a spread object a slow shape: src/http/transport/fast-reads.ts).
    const headers: Record<string, string> = { 'x-content-type-options': 'nosniff', 'x-request-id': requestId };
    if (this.hsts !== undefined) headers['strict-transport-security'] = this.hsts;
    const limits = this.deps.limiter.limits;
    const counted = (verdict: Verdict | undefined): void => {
      if (verdict !== undefined) {
        setRateHeaders(headers, verdict.shown);
        if (verdict.refused) {
          this.refuse(req, res, headers, requestId, rateLimited(verdict));
          return;
        }
      }
      this.readBody(taken, principal, req, res, headers, requestId);
    };
    try {
      const verdict = limits.enabled ? this.deps.limiter.forPrincipal(principal) : undefined;
      if (verdict instanceof Promise) verdict.then(counted).catch((err: unknown) => this.fail(req, res, headers, requestId, err));
      else counted(verdict);
    } catch (err) {
      this.fail(req, res, headers, requestId, err);
    }
  }

  /**
   * The body, whose length Node's parser holds to the declared Content-Length: answered as soon as that many bytes
   * are in (the parser's end of message comes a tick later and changes nothing). An aborted request is left to close.
   */
  private readBody(taken: Taken, principal: Principal, req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, requestId: string): void {
    const chunks: Buffer[] = [];
    let received = 0;
    // A request cut mid-body ends nothing here: its socket is gone. The listener keeps the error from being thrown.
    req.on('error', () => undefined);
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received === taken.length) this.answer(taken, principal, req, res, headers, requestId, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
  }

  /** Runs the operation of a whole body and writes its answer: at once when the engine has it at hand (GraphqlEngine.respond). */
  private answer(taken: Taken, principal: Principal, req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, requestId: string, raw: Buffer): void {
    try {
      const engineRequest = engineRequestOf(
        this.deps,
        {
          post: true,
          params: this.paramsOf(raw),
          principal,
          media: taken.media,
          idempotencyKey: undefined,
          requestId,
          method: 'POST',
          url: GRAPHQL_EXECUTE_PATH,
          since: taken.arrived,
        },
        (rate) => Object.assign(headers, rate),
      );
      const response = this.deps.graphql.respond(engineRequest);
      if (!(response instanceof Promise)) {
        this.write(res, headers, graphqlAnswer(this.deps, response, taken.media, true));
        return;
      }
      response.then((r) => this.write(res, headers, graphqlAnswer(this.deps, r, taken.media, true))).catch((err: unknown) => this.fail(req, res, headers, requestId, err));
    } catch (err) {
      this.fail(req, res, headers, requestId, err);
    }
  }

  /**
   * A body's GraphQL parameters, as the route reads them: decoded, parsed and checked (a throw is its refusal;
   * `match` let through only plain UTF-8 JSON, so the headers add nothing to the answer). Clients send the same few
   * bodies again and again, so the parameters of recent ones are kept, frozen, by their bytes (read as Latin-1:
   * one character per byte, so equal keys are equal bytes).
   */
  private paramsOf(raw: Buffer): GraphqlParams {
    return raw.length > LONGEST_KEPT_BODY ? this.parsed(raw) : this.recentParams(raw.toString('latin1'));
  }

  private parsed(raw: Buffer): GraphqlParams {
    return paramsFromBody(parseJsonBody(bodyText(PLAIN_JSON_HEADERS, raw, 'INVALID_JSON'), this.deps.config.jsonMaxDepth));
  }

  private readonly recentParams = recentMemo((bytes: string) => deepFreeze(this.parsed(Buffer.from(bytes, 'latin1'))), LONGEST_KEPT_BODY);

  private write(res: ServerResponse, headers: Record<string, string>, answer: GraphqlHttpAnswer): void {
    // Added to the literal, not spread into a new object: a spread object's slow shape costs every header after it.
    const out: Record<string, string | string[]> = headers;
    for (const name in answer.headers) out[name] = answer.headers[name]!;
    out['content-length'] = String(Buffer.byteLength(answer.body));
    res.writeHead(answer.status, out);
    res.end(answer.body);
    this.stats.served++;
  }

  /** A refusal before the operation: GraphQL's shape under application/graphql-response+json, as the route's onRequest answers it. */
  private refuse(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, requestId: string, err: unknown): void {
    const refusal = graphqlRefusal(this.deps, req.headers.accept, err);
    if (refusal !== undefined) this.write(res, headers, refusal);
    else this.fail(req, res, headers, requestId, err);
  }

  private fail(req: IncomingMessage, res: ServerResponse, headers: Record<string, string>, requestId: string, err: unknown): void {
    if (writeLeanError(this.deps, req, res, headers, requestId, err)) this.stats.served++;
  }
}
