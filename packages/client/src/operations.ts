// The table of operations the client offers: each collection's path and methods, its nested collections, actions and sub-resources (DESIGN §3, §7). The types (src/types.ts) give each its shapes.

export type Verb = 'list' | 'get' | 'create' | 'update' | 'replace' | 'delete';

export interface CollectionSpec {
  /** The collection's path segment under the version (`/v2/<path>`). */
  path: string;
  verbs: readonly Verb[];
  /** Collections under one object: `name(parentId)` → `/<path>/{id}/<nested.path>`. */
  nested?: Readonly<Record<string, { path: string; verbs: readonly Verb[] }>>;
  /** POST actions answering the object: `name(id)` → `POST /<path>/{id}/<segment>`. */
  actions?: Readonly<Record<string, string>>;
  /** POST actions answering 202: `name(id)` → an operation handle. */
  accepted?: Readonly<Record<string, string>>;
  /** Sub-resources read with GET: `name(id)` → `GET /<path>/{id}/<segment>`. */
  reads?: Readonly<Record<string, string>>;
}

const ALL: readonly Verb[] = ['list', 'get', 'create', 'update', 'replace', 'delete'];

/** Every collection of the reference API, by its client name (camelCase, DESIGN §7). */
export const COLLECTIONS: Readonly<Record<string, CollectionSpec>> = {
  products: { path: 'products', verbs: ALL },
  users: { path: 'users', verbs: ALL, nested: { orders: { path: 'orders', verbs: ['list', 'create'] } } },
  orders: {
    path: 'orders',
    verbs: ALL,
    nested: { items: { path: 'order-items', verbs: ['list', 'create'] } },
    actions: { cancel: 'cancel' },
    accepted: { pay: 'payment' },
    reads: { payment: 'payment', tracking: 'tracking' },
  },
  orderItems: { path: 'order-items', verbs: ALL },
  reviews: { path: 'reviews', verbs: ALL },
  apiKeys: { path: 'api-keys', verbs: ALL },
  oauthClients: { path: 'oauth-clients', verbs: ALL },
  webhookEndpoints: {
    path: 'webhook-endpoints',
    verbs: ALL,
    nested: { deliveries: { path: 'webhook-deliveries', verbs: ['list'] } },
    actions: { rotateSecret: 'rotate-secret' },
  },
  webhookDeliveries: { path: 'webhook-deliveries', verbs: ['list', 'get'], accepted: { retry: 'retry' } },
};

/**
 * The platform operations (sessions, the password change) exist in the current version only: a client of an older
 * version logs in and changes passwords there (the session cookie has `Path=/`, so it serves every version).
 */
export const PLATFORM_PREFIX = '/v2';
export const SESSIONS_PATH = `${PLATFORM_PREFIX}/sessions`;
/** The event log (DESIGN §9): one path for every version; the payloads' version is the credential's pin, else the current one. */
export const EVENTS_PATH = '/events';
