// What the HTTP layer is given by the composition root: the catalog, the use cases its handlers call and the transport's own collaborators; never the store.
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { DeviceCookies } from '../auth/device-cookies.js';
import type { CookieNames } from '../auth/session-cookies.js';
import type { SigningKeys } from '../auth/signing-keys.js';
import type { ClientCredentialsGrant } from '../auth/client-credentials.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Config } from '../config/config.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import type { CompiledModel } from '../model/compile.js';
import type { IdempotentExecution } from '../services/idempotent.js';
import type { ListPages } from '../services/list-pages.js';
import type { PasswordChanges } from '../services/password-change.js';
import type { ResourceService } from '../services/resource-service.js';
import type { Sessions } from '../services/sessions.js';
import type { EventFeed } from '../services/event-feed.js';
import type { EventHub } from '../events/hub.js';
import type { StreamCaps } from '../events/stream-caps.js';
import type { GraphqlEngine } from '../graphql/engine.js';

/** What the events endpoint needs beyond the common dependencies (src/http/routes/event-routes.ts). */
export interface EventDeps {
  feed: EventFeed;
  hub: EventHub;
  /** Reconnection delay suggested to clients (`retry:`, sent once). */
  retryMs: number;
  maxBufferBytes: number;
  /** Streams one principal may hold at once in this process (429 past it). */
  maxStreamsPerPrincipal: number;
  /** Streams one user may hold at once in this process, whichever of its credentials opened them (429 past it). */
  maxStreamsPerUser: number;
  /**
   * The count of open streams against those caps, one for the process: REST's `/events` streams and GraphQL
   * subscriptions (src/http/graphql/graphql-sse.ts) draw on the same allowance. Made from the two limits when absent.
   */
  caps?: StreamCaps;
}

export interface HttpDeps {
  /** Every operation served (src/catalog/catalog.ts): routes, Allow and the lean read path's targets come from it. */
  catalog: Catalog;
  model: CompiledModel;
  services: ResourceService;
  /** The password change use case. */
  passwordChanges: PasswordChanges;
  /** Pages of collections in every pagination style. */
  pages: ListPages;
  config: Config;
  /** The runtime's clock, Unix ms (version sunsets). */
  now: () => number;
  auth: Authenticator;
  /** The OAuth token endpoint's grant (client credentials). */
  clientCredentials: ClientCredentialsGrant;
  signingKeys: SigningKeys;
  /** Login, the current session and logout (cookie sessions). */
  sessions: Sessions;
  cookieNames: CookieNames;
  /** The OAuth issuer (the public base URL), decided once the server listens. */
  issuer: () => string;
  deviceCookies: DeviceCookies;
  /** Runs POSTs under their Idempotency-Key (the header is mapped in src/http/routes/idempotent.ts). */
  idempotent: IdempotentExecution;
  limiter: RateLimiter;
  /** The secret that signs cursors. */
  secret: string;
  /**
   * What /readyz checks, as narrow probes rather than the store itself: `required` dependencies make it 503
   * when down (the store); `optional` ones only degrade it (Redis: rate limits then count per process).
   */
  readiness: { required: Record<string, () => Promise<boolean>>; optional: Record<string, () => Promise<boolean>> };
  log: Logger;
  /** Prometheus metrics of this process (src/lib/metrics.ts). */
  metrics: { text(): Promise<string>; contentType: string; versionRequest(version: string, deprecated: boolean): void };
  /** The event list and stream (src/http/routes/event-routes.ts). */
  events: EventDeps;
  /** The GraphQL engine behind `/graphql` (src/http/graphql/graphql-routes.ts). */
  graphql: GraphqlEngine;
}
