// Types of a resource definition: fields, relations, actions, permissions and hooks, as authors write them.
import type { Principal } from './principal.js';
import type { StoredRecord } from './records.js';
import type { VersionDef } from './versions.js';

export type FieldType = 'string' | 'email' | 'uuid' | 'integer' | 'boolean' | 'enum' | 'timestamp' | 'money' | 'string[]' | 'object';

/** A grant names a role, `owner` (the caller owns the object) or `authenticated` (any principal). */
export type Grant = string;

export interface FieldDef {
  type: FieldType;
  /** Must be present on create and replace. */
  required?: boolean;
  /** Applied when the field is omitted on create or replace, or removed by a merge patch. */
  default?: unknown;
  /** Set by the server only; a client that sends it gets 422. */
  readOnly?: boolean;
  /** Accepted from clients, never rendered (passwords). */
  writeOnly?: boolean;
  /** Accepted on create only; after that it cannot change (foreign keys, passwords). */
  createOnly?: boolean;
  /** Stored but never rendered nor accepted (derived secrets such as password hashes). */
  hidden?: boolean;
  /** Not stored: a hook consumes it (a password becomes a password hash). */
  virtual?: boolean;
  /** Only these roles may assign the field; anyone else gets 422 (mass-assignment guard). */
  writableBy?: string[];
  unique?: boolean;
  filterable?: boolean;
  sortable?: boolean;
  searchable?: boolean;
  /** For `enum`. */
  values?: readonly string[];
  minLength?: number;
  maxLength?: number;
  /** For `string`: an ECMA-262 regular expression the value must match. */
  pattern?: string;
  minimum?: number;
  maximum?: number;
  /** For `string[]`. */
  maxItems?: number;
  /** A uuid that names an object of this resource. */
  references?: string;
  /** For `object`: its typed properties (a closed object); without them any JSON object is accepted. */
  properties?: Record<string, FieldDef>;
  /**
   * For a read-only `object` that holds other JSON (an array of attempts): the JSON Schema of what it holds, as
   * documents and the response checks show it. Clients never write it.
   */
  shape?: Record<string, unknown>;
  description?: string;
  /** Example values, for generated documentation. */
  examples?: unknown[];
}

export interface BelongsTo {
  /** The parent resource name, such as `users`. */
  resource: string;
  /** The foreign key field on this resource, such as `user_id`. */
  field: string;
  /** Generate `/{parent}/{id}/{this}` nested collection routes. */
  nested?: boolean;
  /** What deleting the parent does: refuse while children exist (409, the default) or delete them too. */
  onDelete?: 'restrict' | 'cascade';
  /**
   * The child is part of the parent (an order's items): creating, changing or deleting one changes the parent,
   * so it takes the parent's lock first and follows the parent's state rule (src/model/state-rule.ts): while
   * an operation of the parent is in flight (its payment) the write is 409 INVALID_STATE.
   */
  partOf?: boolean;
  /**
   * The relation's name on this resource, to the parent (`orderItem.product`); by default the field without
   * `_id` in camelCase (`product_id` → `product`). src/model/relations.ts derives both directions.
   */
  relation?: string;
  /**
   * The relation's name on the parent, to the children (`order.items`); by default this resource's name in
   * camelCase, less the parent's singular as a prefix (`order-items` under `orders` → `items`).
   */
  inverse?: string;
}

export interface Permissions {
  read: Grant[];
  create: Grant[];
  update: Grant[];
  delete: Grant[];
}

/** How ownership is decided: a field equal to the caller's user id, or through a parent's owner. */
export type Ownership = { field: string } | { field: string; through: string };

export interface PrepareContext {
  principal: Principal;
  now: string;
  /** Hashes a password with the configured memory-hard KDF. */
  hashPassword(password: string): Promise<string>;
}

export interface HookContext extends PrepareContext {
  /** True while a parent's delete cascades to this object. */
  cascading: boolean;
  /** Values shown once in the create response and never stored (an API key's secret). */
  reveal: Record<string, unknown>;
  /** The service, for hooks that must read or change other resources in the same transaction. */
  services: HookServices;
}

export interface HookServices {
  get(resource: string, id: string): Promise<StoredRecord | null>;
  /**
   * Reads an object and holds it until the transaction ends: concurrent changes of it wait, so a check made
   * on it (an order still pending) and a value computed under it (its total) stay true until commit.
   */
  lock(resource: string, id: string): Promise<StoredRecord | null>;
  /** The exact integer SUM over the matching objects of the product of `factors` (query paths such as `unit_price.amount`). */
  sum(resource: string, where: Record<string, unknown>, factors: string[]): Promise<number>;
  /** Updates another object in the same transaction, writing its own event. */
  update(resource: string, id: string, changes: Record<string, unknown>, eventType?: string): Promise<StoredRecord>;
  list(resource: string, where: Record<string, unknown>): Promise<StoredRecord[]>;
}

export interface Hooks {
  /** Runs before the transaction opens, for slow work that must not hold a write lock (password hashing). */
  prepare?: (values: Record<string, unknown>, ctx: PrepareContext) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Runs in the transaction before an insert; returns the values to store (may add hidden fields). */
  beforeCreate?: (values: Record<string, unknown>, ctx: HookContext) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Runs in the transaction before an update; receives the new values and the current record. */
  beforeUpdate?: (values: Record<string, unknown>, current: StoredRecord, ctx: HookContext) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Runs in the transaction after any insert, update or delete of this resource. */
  afterWrite?: (record: StoredRecord, kind: 'created' | 'updated' | 'deleted', ctx: HookContext) => Promise<void> | void;
  /** Runs in the transaction before a delete; throw an AppError to refuse. */
  beforeDelete?: (current: StoredRecord, ctx: HookContext) => Promise<void> | void;
}

export interface ActionDef {
  method: 'POST' | 'GET';
  allow: Grant[];
  /**
   * POST actions: the verb that names the action where operations are named by verb and object (GraphQL's
   * `payOrder`); the action's name in camelCase by default (`cancel` → `cancelOrder`). A noun-named action
   * (`payment`) says its verb (`pay`).
   */
  verb?: string;
  description?: string;
  /**
   * POST actions: the body it takes, as fields (validated like a resource body; 422 with details), handed
   * to `run` as its third argument. Without it the action takes no body.
   */
  input?: Record<string, FieldDef>;
  /** POST actions: the success status, 200 (the changed object) or 202 (accepted; `perform` does the work later). */
  status?: 200 | 202;
  /**
   * The states in which the action exists; outside them a POST is 409 INVALID_STATE and a GET is 404. A POST
   * action also needs the object free of operations in flight (the state rule, src/model/state-rule.ts).
   */
  when?: (record: StoredRecord) => boolean;
  /** POST actions: the changes to apply to the object; they go through the same update path (transitions, events). */
  run?: (record: StoredRecord, ctx: HookContext, input: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** GET actions: compute a read-only view of the object. */
  view?: (record: StoredRecord) => Record<string, unknown>;
  /**
   * POST actions with `status: 202`: the slow work (a payment provider's call), done by a worker after the
   * request committed, outside any transaction. It returns the changes to apply to the object, which go
   * through the same update path as `run`'s (transitions, state events); a throw fails the operation with
   * its message, and so does taking longer than CANON_OPERATION_TIMEOUT_MS (`ctx.signal` is then aborted:
   * hand it to the provider's client). It may run more than once for one request (a worker that died
   * mid-way): pass `ctx.idempotencyKey` on to whatever it calls. From the request's commit until the
   * operation is settled the object is held (the state rule, src/model/state-rule.ts): every other write
   * of it, and every POST action on it, is 409 INVALID_STATE, so the object is as `perform` found it when
   * its changes are applied.
   */
  perform?: (record: StoredRecord, ctx: PerformContext) => Promise<Record<string, unknown>>;
}

/** What an asynchronous action's `perform` is given besides the object. */
export interface PerformContext {
  /** When this attempt started (ISO 8601). */
  now: string;
  /**
   * The operation's id, the same on every attempt of it: a provider given it as its idempotency key acts
   * once however often the attempt is repeated.
   */
  idempotencyKey: string;
  /** 1 for the first attempt; more when a worker died before finishing the earlier ones. */
  attempt: number;
  /** Aborted when the attempt has taken longer than its bound (CANON_OPERATION_TIMEOUT_MS): the attempt has failed. */
  signal: AbortSignal;
}

/** Allowed moves of an enum field; a move outside them is 409 INVALID_STATE. */
export type Transitions = Record<string, readonly string[]>;

export interface ResourceDef {
  /** Plural, lowercase, hyphenated: `order-items`. */
  name: string;
  /** What the resource is, for generated documentation. */
  description?: string;
  /** Example objects as clients see them, for generated documentation. */
  examples?: Record<string, unknown>[];
  /** Singular, used in event types: `order_item` → `order_item.created`. */
  singular: string;
  fields: Record<string, FieldDef>;
  belongsTo?: BelongsTo[];
  permissions: Permissions;
  ownership?: Ownership;
  actions?: Record<string, ActionDef>;
  transitions?: Record<string, Transitions>;
  hooks?: Hooks;
  /** Events by field change: when `status` becomes `cancelled`, the event is `order.cancelled`. */
  stateEvents?: Record<string, Record<string, string>>;
  /**
   * Further event types that hooks write for this resource (`ctx.services.update(resource, id, changes,
   * eventType)`), each with what it means: the event catalog lists every type an app can emit, so an update
   * under a type declared nowhere is refused (a programming error, 500) rather than sent unannounced.
   */
  eventTypes?: Record<string, string>;
  /** Platform bookkeeping (sessions, signing keys): stored like any resource but given no routes and no events. */
  internal?: boolean;
  /**
   * `false`: changes of this resource write no events. For records about the event pipeline itself (webhook
   * deliveries): their events would feed new deliveries, without end.
   */
  events?: boolean;
  /**
   * Objects that are credentials, or that credentials act for: deleting one, or changing one of these
   * fields (`'*'`: any field), ends every cached credential in every process from the next request on
   * (the store's credentials epoch). API keys and OAuth clients have `'*'`; the users resource gets
   * `['role', 'password_hash']` unless the app says otherwise.
   */
  credentialFields?: '*' | readonly string[];
  /**
   * Secrets a response shows once and the store never keeps in clear (a new API key's `key`), set by hooks in
   * `ctx.reveal`: declared so the response schemas (and the OpenAPI document) name them. Each is a string.
   */
  revealed?: Record<string, { description: string }>;
}

export interface AppDef {
  resources: ResourceDef[];
  /**
   * The API versions served, oldest first, each with the declarative changes that lead to the next newer
   * one (src/model/version-changes.ts). Without them the app serves `v2` alone.
   */
  versions?: VersionDef[];
  /** The resource whose objects principals act for; needs `role` and `email` fields. */
  users: string;
  /** Seeds demo data on first start in development. */
  seed?: (seeder: Seeder) => Promise<void>;
}

export interface Seeder {
  /** Creates an object as the system (an admin bound to no user). */
  create(resource: string, body: Record<string, unknown>): Promise<StoredRecord>;
  /** A seeder acting as the given user, for objects whose author is the caller. */
  as(userId: string): Seeder;
}
