// Webhook receiving (DESIGN §9, conventions spec §6): verifyWebhook for one delivery, createWebhookHandler for a whole receiver, and their types.
export { verifyWebhook, createVerifier, WebhookVerificationError } from './verify.js';
export type { Verify, VerifyOptions, VerifyWebhookInput, WebhookHeaders, WebhookSecrets, WebhookVerificationReason } from './verify.js';
export { createWebhookHandler } from './handler.js';
export type { DeadLetter, Delivery, WebhookHandler, WebhookHandlerOptions, WebhookReceipt, WebhookRequest, WebhookResponse } from './handler.js';
export { MemorySeenStore } from './seen-store.js';
export type { MemorySeenStoreOptions, SeenStore } from './seen-store.js';
export type { CanonEvent, ThinCanonEvent, WebhookEvent } from '../event.js';
