// The client's types, derived from the generated `paths` of each version's document (src/generated/): every method's parameters and result come from its operation, so a v1 client sees v1 shapes.
import type { paths as V1Paths } from './generated/v1.js';
import type { paths as V2Paths } from './generated/v2.js';
import type { Operation } from './operation.js';
import type { Listing, PagingOptions } from './paging.js';

/** The API versions this client knows (DESIGN §10): 1 (deprecated) and 2 (current). */
export type ApiVersion = 1 | 2;

/** Each version's generated `paths`. */
export interface PathsOf {
  1: V1Paths;
  2: V2Paths;
}

/** The operation object of `M` on `Path` in `P`, or never when the document has no such operation. */
export type OperationAt<P, Path extends string, M extends string> = Path extends keyof P ? (M extends keyof P[Path] ? Exclude<P[Path][M], undefined> : never) : never;

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;

/** The JSON body of an operation's `S` answer. */
export type ResponseBody<O, S extends number> = O extends { responses: infer R } ? (S extends keyof R ? JsonOf<R[S]> : never) : never;

/** The request body of an operation in one media type (JSON by default; merge patch for PATCH). */
export type RequestBody<O, Media extends string = 'application/json'> = O extends { requestBody?: infer B }
  ? NonNullable<B> extends { content: infer C }
    ? Media extends keyof C
      ? C[Media]
      : never
    : never
  : never;

/** An operation's query parameters. */
export type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** Options every method takes. */
export interface CallOptions {
  /** Aborts the call, its retries and waits included. */
  signal?: AbortSignal;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

export interface GetOptions extends CallOptions {
  ifNoneMatch?: undefined;
}

/** A conditional read (RFC 9110 §13.1.2): resolves with undefined on 304, unless the ETag cache holds that version. */
export interface ConditionalGetOptions extends CallOptions {
  ifNoneMatch: string;
}

export interface CreateOptions extends CallOptions {
  /** The key of this POST (DESIGN §11); a fresh UUID when absent. Give your own to make a retry across restarts safe. */
  idempotencyKey?: string;
}

export interface WriteOptions extends CallOptions {
  /** The ETag the object must still have (RFC 9110 §13.1.1): 412 PRECONDITION_FAILED otherwise. */
  ifMatch?: string;
}

/** `list()`'s parameters: the REST query of the collection (filters, `sort`, `fields`, `q`, the styles' parameters) and `style`. */
export type ListParams<O> = QueryOf<O> & PagingOptions;
export type PageOf<O> = ResponseBody<O, 200>;
export type ItemOf<O> = PageOf<O> extends { data: Array<infer T> } ? T : never;

type ItemPath<C extends string> = `${C}/{id}`;

export interface Lists<P, C extends string> {
  /** Async-iterable over every item of every page (`for await`); `.pages()` for the pages. */
  list(params?: ListParams<OperationAt<P, C, 'get'>>): Listing<ItemOf<OperationAt<P, C, 'get'>>, PageOf<OperationAt<P, C, 'get'>>>;
}

export interface Reads<P, C extends string> {
  get(id: string, options: ConditionalGetOptions): Promise<ResponseBody<OperationAt<P, ItemPath<C>, 'get'>, 200> | undefined>;
  get(id: string, options?: GetOptions): Promise<ResponseBody<OperationAt<P, ItemPath<C>, 'get'>, 200>>;
}

export interface Creates<P, C extends string> {
  create(body: RequestBody<OperationAt<P, C, 'post'>>, options?: CreateOptions): Promise<ResponseBody<OperationAt<P, C, 'post'>, 201>>;
}

export interface Updates<P, C extends string> {
  /** A JSON Merge Patch (RFC 7396): `null` removes a field, nested objects merge. */
  update(
    id: string,
    patch: RequestBody<OperationAt<P, ItemPath<C>, 'patch'>, 'application/merge-patch+json'>,
    options?: WriteOptions,
  ): Promise<ResponseBody<OperationAt<P, ItemPath<C>, 'patch'>, 200>>;
}

export interface Replaces<P, C extends string> {
  /** A whole replacement (DESIGN §4): omitted optional fields reset. */
  replace(id: string, body: RequestBody<OperationAt<P, ItemPath<C>, 'put'>>, options?: WriteOptions): Promise<ResponseBody<OperationAt<P, ItemPath<C>, 'put'>, 200>>;
}

export interface Deletes {
  delete(id: string, options?: WriteOptions): Promise<void>;
}

/** A collection with every method (DESIGN §7 "Client (contract)"). */
export type Collection<P, C extends string> = Lists<P, C> & Reads<P, C> & Creates<P, C> & Updates<P, C> & Replaces<P, C> & Deletes;

/** A POST action on one object answering the object (`cancel`, `rotate-secret`). */
export type Action<P, Path extends string> = (id: string, options?: CreateOptions) => Promise<ResponseBody<OperationAt<P, Path, 'post'>, 200>>;

/** A POST action answering 202: the operation handle, whose `done()` resolves with what `Final`'s GET answers. */
export type AsyncAction<P, Path extends string, Final extends string> = (
  id: string,
  options?: CreateOptions,
) => Promise<Operation<ResponseBody<OperationAt<P, Path, 'post'>, 202>, ResponseBody<OperationAt<P, Final, 'get'>, 200>>>;

/** A GET of a sub-resource of one object (`payment`, `tracking`). */
export type SubRead<P, Path extends string> = (id: string, options?: CallOptions) => Promise<ResponseBody<OperationAt<P, Path, 'get'>, 200>>;

type EventsOperation<P> = OperationAt<P, '/events', 'get'>;

/** `client.events.list()`'s parameters: `after` an event id, `type` one pattern or several (`order.*`). */
export type EventListParams<P> = Omit<QueryOf<EventsOperation<P>>, 'type'> & { type?: string | readonly string[] };

/** What `POST /v2/sessions` and `GET /v2/sessions/current` answer. */
export type SessionBody = ResponseBody<OperationAt<V2Paths, '/v2/sessions', 'post'>, 201>;

/** The resource methods of one version: `P` its paths, `B` its prefix (`/v2`). */
export interface Resources<P, B extends string> {
  products: Collection<P, `${B}/products`>;
  users: Collection<P, `${B}/users`> & {
    /** The user's orders (`/users/{id}/orders`). */
    orders(userId: string): Lists<P, `${B}/users/{id}/orders`> & Creates<P, `${B}/users/{id}/orders`>;
    /** `PUT /v2/users/{id}/password` (a platform operation of the current version): ends every session of the user. */
    changePassword(userId: string, body: RequestBody<OperationAt<V2Paths, '/v2/users/{id}/password', 'put'>>, options?: CallOptions): Promise<void>;
  };
  orders: Collection<P, `${B}/orders`> & {
    /** The order's items (`/orders/{id}/order-items`). */
    items(orderId: string): Lists<P, `${B}/orders/{id}/order-items`> & Creates<P, `${B}/orders/{id}/order-items`>;
    cancel: Action<P, `${B}/orders/{id}/cancel`>;
    /** Starts the payment: 202, an operation whose `done()` resolves with the payment's final state. */
    pay: AsyncAction<P, `${B}/orders/{id}/payment`, `${B}/orders/{id}/payment`>;
    /** The newest payment's state. */
    payment: SubRead<P, `${B}/orders/{id}/payment`>;
    tracking: SubRead<P, `${B}/orders/{id}/tracking`>;
  };
  orderItems: Collection<P, `${B}/order-items`>;
  reviews: Collection<P, `${B}/reviews`>;
  apiKeys: Collection<P, `${B}/api-keys`>;
  oauthClients: Collection<P, `${B}/oauth-clients`>;
  webhookEndpoints: Collection<P, `${B}/webhook-endpoints`> & {
    rotateSecret: Action<P, `${B}/webhook-endpoints/{id}/rotate-secret`>;
    /** The endpoint's deliveries (`/webhook-endpoints/{id}/webhook-deliveries`). */
    deliveries(endpointId: string): Lists<P, `${B}/webhook-endpoints/{id}/webhook-deliveries`>;
  };
  webhookDeliveries: Lists<P, `${B}/webhook-deliveries`> &
    Reads<P, `${B}/webhook-deliveries`> & {
      /** Sends a failed delivery again: 202, an operation whose `done()` resolves with the delivery once it is no longer pending. */
      retry: AsyncAction<P, `${B}/webhook-deliveries/{id}/retry`, `${B}/webhook-deliveries/{id}`>;
    };
}
