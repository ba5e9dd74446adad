// createClient (DESIGN §7 "Client (contract)"): the options checked, one transport, the credential, and the methods built from the operations table, typed per version.
import { credentialOf, SessionCredential, type CredentialOptions } from './credentials/index.js';
import { EtagCache } from './etag-cache.js';
import type { CanonEvent } from './event.js';
import { fromSpec, list, read, remove, segment, type Methods } from './methods.js';
import { COLLECTIONS, EVENTS_PATH, PLATFORM_PREFIX, SESSIONS_PATH } from './operations.js';
import type { Listing } from './paging.js';
import { retryPolicy, type RetryOptions } from './retry.js';
import { openEventStream, type EventStreamOptions } from './stream.js';
import { Transport } from './transport.js';
import type { ApiVersion, EventListParams, ItemOf, OperationAt, PageOf, PathsOf, Resources, SessionBody } from './types.js';

export interface ClientOptions<V extends ApiVersion = ApiVersion> extends CredentialOptions {
  /** The server's root (`https://api.example.com`, or with a proxy's prefix); paths are added to it as they are. */
  baseUrl: string;
  /** The API version the client speaks (DESIGN §10), under the server's default path strategy (`/v1/…`, `/v2/…`). Default 2. */
  version?: V;
  /** How failures are retried (packages/client/README.md, "Retries"). */
  retries?: RetryOptions;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
  /** Keep each GET's last 200 with its ETag and answer 304s from it. Off by default. */
  cache?: boolean | { maxEntries?: number };
  /** Headers sent on every request. */
  headers?: Record<string, string>;
  /** How long one try may take, the answer's body included, before it counts as a network failure and is abandoned (a `signal` cancels). Default 30 s; 0: no limit. */
  timeoutMs?: number;
}

/** `client.events.stream()`'s options: start after an event id, which types, when to stop, how to reconnect (src/stream.ts). */
export type EventStreamParams = Pick<EventStreamOptions, 'after' | 'type' | 'signal' | 'reconnect'>;

type Events<P> = {
  /** The event log (`GET /events`), oldest first, across pages: `after` an event id, `type` patterns (`order.*`). */
  list(params?: EventListParams<P>): Listing<ItemOf<OperationAt<P, '/events', 'get'>>, PageOf<OperationAt<P, '/events', 'get'>>>;
  /**
   * The live stream (`GET /events` as Server-Sent Events, DESIGN §9): each new event as it is written, resumed with
   * `Last-Event-ID` after a disconnect; this client's credential is asked for its headers at every connection.
   */
  stream(params?: EventStreamParams): AsyncGenerator<CanonEvent, void, undefined>;
};

export interface Sessions {
  /** Logs in with the session credential's email and password (the client also does it by itself before its first request). */
  login(): Promise<SessionBody>;
  /** The current session, its CSRF token included. */
  current(): Promise<SessionBody>;
  /** Ends the session; the next request logs in again when the client has an email and a password. */
  logout(): Promise<void>;
}

/** A client of one API version: `CanonClient<1>` has v1's names and shapes. */
export type CanonClient<V extends ApiVersion = 2> = Resources<PathsOf[V], `/v${V}`> & {
  readonly version: V;
  readonly baseUrl: string;
  readonly events: Events<PathsOf[V]>;
  /** Cookie sessions (only with `session` credentials; other clients get a TypeError). */
  readonly sessions: Sessions;
};

export function createClient(options: ClientOptions<1> & { version: 1 }): CanonClient<1>;
export function createClient(options: ClientOptions<2>): CanonClient<2>;
/** A version known only at run time: narrow the result by its `version`. */
export function createClient(options: ClientOptions): CanonClient<1> | CanonClient<2>;
export function createClient(options: ClientOptions): CanonClient<1> | CanonClient<2> {
  if (typeof options !== 'object' || options === null) throw new TypeError('createClient takes an options object');
  const { baseUrl } = options;
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new TypeError(`baseUrl must be an absolute http(s) URL, not ${JSON.stringify(baseUrl)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new TypeError(`baseUrl must be an http(s) URL, not ${parsed.protocol}`);
  const version = options.version ?? 2;
  if (version !== 1 && version !== 2) throw new TypeError(`version must be 1 or 2, not ${String(version)}`);
  if (typeof (options.fetch ?? globalThis.fetch) !== 'function') throw new TypeError('no fetch here: pass createClient({ fetch })');
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw new TypeError(`timeoutMs must be a number of milliseconds, not ${String(timeoutMs)}`);
  const cache = options.cache === undefined || options.cache === false ? undefined : new EtagCache(options.cache === true ? undefined : options.cache.maxEntries);

  const transport = new Transport({
    baseUrl,
    // The global fetch called bare: a browser refuses it as a method of another object ("Illegal invocation").
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    retries: retryPolicy(options.retries),
    cache,
    headers: { ...options.headers },
    timeoutMs,
  });
  const credential = credentialOf(options, transport, SESSIONS_PATH);
  transport.credential = credential;
  const prefix = `/v${version}`;

  const client: Record<string, unknown> = { version, baseUrl };
  for (const [name, spec] of Object.entries(COLLECTIONS)) client[name] = fromSpec(transport, prefix, spec);
  (client.users as Methods).changePassword = (userId: string, body: unknown, callOptions?: { signal?: AbortSignal; headers?: Record<string, string> }) =>
    remove(transport, 'PUT', `${PLATFORM_PREFIX}/users/${segment(userId)}/password`, body, callOptions);
  client.events = {
    list: (params: { type?: string | readonly string[] } & Record<string, string | number | readonly string[] | undefined> = {}) => list(transport, EVENTS_PATH, params),
    stream: (params: EventStreamParams = {}) => {
      const url = transport.resolve(EVENTS_PATH);
      return openEventStream({ ...params, url, fetch: transport.fetch, headers: () => transport.headersFor('GET', url) });
    },
  };
  const session = (): SessionCredential => {
    if (!(credential instanceof SessionCredential)) throw new TypeError('client.sessions needs a client created with session credentials');
    return credential;
  };
  client.sessions = {
    login: () => session().login(),
    current: async () => {
      session();
      return read(transport, `${SESSIONS_PATH}/current`);
    },
    logout: () => session().logout(),
  };
  return client as unknown as CanonClient<1> | CanonClient<2>;
}
