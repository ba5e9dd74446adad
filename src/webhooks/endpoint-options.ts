// The webhook endpoint resource's options for a process: the URL policy, secret generation and sealing, the versions served.
import { seal } from '../lib/key-crypto.js';
import type { AppDef } from '../model/types.js';
import { compileVersions } from '../model/versions.js';
import type { WebhookEndpointOptions } from './endpoints.js';
import { urlVerdict } from './address-policy.js';
import { generateWebhookSecret } from './signature.js';

/** Purpose of the key that seals webhook secrets at rest (HKDF info, src/lib/key-crypto.ts). */
export const SEAL_PURPOSE = 'webhook-secret';

/**
 * The secret that seals is CANON_SECRET, or the development one the store keeps, known only after the store
 * opens: the resource definitions are built before, so they reach it through `secret()`, as they reach the
 * store's event head through `eventHead()`.
 */
export function webhookEndpointOptions(allowPrivate: boolean, app: AppDef, secret: () => string, eventHead: () => Promise<number>): WebhookEndpointOptions {
  const policy = { allowPrivate };
  return {
    // http:// is refused even with CANON_WEBHOOK_ALLOW_PRIVATE (DESIGN §9): it lifts the address check only.
    checkUrl: async (url) => {
      const verdict = await urlVerdict(url, policy);
      return verdict.allowed ? null : verdict.reason;
    },
    newSecret: generateWebhookSecret,
    seal: (value) => seal(value, `${SEAL_PURPOSE}:${secret()}`),
    versionDates: compileVersions(app.versions).map((v) => v.date),
    users: app.users,
    eventHead,
  };
}
