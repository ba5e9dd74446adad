// canon-client's public entry point: what `import … from 'canon-client'` gives (DESIGN §7 "Client (contract)").
export { createClient } from './client.js';
export type { CanonClient, ClientOptions, EventStreamParams, Sessions } from './client.js';
export { CanonError, CanonNetworkError, OperationFailedError, OperationTimeoutError } from './errors.js';
export type { ErrorContext, ErrorObject } from './errors.js';
export type { OAuthOptions, SessionOptions } from './credentials/index.js';
export type { DoneOptions, Operation } from './operation.js';
export { Listing } from './paging.js';
export type { PageStyle, PagingOptions } from './paging.js';
export { responseOf } from './response-info.js';
export type { ResponseInfo } from './response-info.js';
export type { RetryOptions } from './retry.js';
export type {
  ApiVersion,
  CallOptions,
  Collection,
  ConditionalGetOptions,
  CreateOptions,
  GetOptions,
  ItemOf,
  ListParams,
  OperationAt,
  PageOf,
  PathsOf,
  RequestBody,
  ResponseBody,
  SessionBody,
  WriteOptions,
} from './types.js';
export type { components as V1Components, paths as V1Paths, webhooks as V1Webhooks } from './generated/v1.js';
export type { components as V2Components, paths as V2Paths, webhooks as V2Webhooks } from './generated/v2.js';
export { openEventStream } from './stream.js';
export type { EventStreamOptions, ReconnectOptions } from './stream.js';
export { createVerifier, createWebhookHandler, MemorySeenStore, verifyWebhook, WebhookVerificationError } from './webhooks/index.js';
export type {
  DeadLetter,
  Delivery,
  MemorySeenStoreOptions,
  SeenStore,
  Verify,
  VerifyOptions,
  VerifyWebhookInput,
  WebhookHandler,
  WebhookHandlerOptions,
  WebhookHeaders,
  WebhookReceipt,
  WebhookRequest,
  WebhookResponse,
  WebhookSecrets,
  WebhookVerificationReason,
} from './webhooks/index.js';
export type { CanonEvent, ThinCanonEvent, WebhookEvent } from './event.js';
