// What every resolver of one request is given: the principal, the use cases, the request's own loaders, and where reads go.
import type { Principal } from '../model/principal.js';
import type { Ctx } from '../services/resource-service.js';
import type { Reader } from '../store/types.js';
import type { EngineServices } from './engine-services.js';
import type { KeyedRun } from './keyed.js';
import { Loaders } from './loaders.js';

export interface Context {
  principal: Principal;
  /** The services' request context: who acts, and bodies come as JSON. */
  ctx: Ctx;
  deps: EngineServices;
  /** Per request (DataLoader caches are the request's own: nothing one caller read reaches another). */
  loaders: Loaders;
  /**
   * Set while a keyed mutation's response is rendered inside its own transaction (src/graphql/keyed.ts): every
   * read goes through it, seeing the change before it commits and taking no other connection meanwhile.
   */
  reader: Reader | undefined;
  /** The Idempotency-Key run of a request carrying one mutation under a key; undefined otherwise. */
  keyed: KeyedRun | undefined;
  /**
   * A mutation's result computed already (the keyed run renders its stored response from it): the root
   * mutation field answers with it instead of running the change again.
   */
  precomputed?: unknown;
  /** Values worked out once per request (plans parsed from the same arguments). */
  memo: Map<string, unknown>;
  /** A subscription's reconnection: the request's `Last-Event-ID`, which it resumes after (src/graphql/subscriptions.ts). */
  lastEventId?: string;
}

export function createContext(deps: EngineServices, principal: Principal, reader?: Reader, keyed?: KeyedRun): Context {
  return {
    principal,
    ctx: { principal, format: 'json' },
    deps,
    loaders: new Loaders(deps, principal, reader),
    reader,
    keyed,
    memo: new Map(),
  };
}

export type { EngineServices };
