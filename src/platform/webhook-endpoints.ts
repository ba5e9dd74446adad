// The /webhook-endpoints platform resource (DESIGN §9): admins register https receivers; the signing secret is shown once and kept sealed.
import { AppError } from '../errors/app-error.js';
import { defineResource, f } from '../model/define.js';
import type { ResourceDef } from '../model/types.js';
import type { StoredRecord } from '../model/records.js';

export const WEBHOOK_ENDPOINTS = 'webhook-endpoints';
/** A rotated-out secret keeps signing this long, so receivers can switch without losing a delivery (DESIGN §9). */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** One signing secret, sealed at rest; `until` is set on a secret rotated out (it signs until then). */
export interface SigningSecret {
  sealed: string;
  until: string | null;
}

/** What the resource needs from the runtime: URL policy, secrets and the versions payloads may be rendered in. */
export interface WebhookEndpointOptions {
  /** Why a URL may not receive webhooks, or null when it may (https only, public addresses unless allowed). */
  checkUrl: (url: string) => Promise<string | null>;
  newSecret: () => string;
  seal: (secret: string) => string;
  /** Release dates of the versions served, newest first: `api_version` is one of them, the newest by default. */
  versionDates: readonly string[];
  /** The event log's head (Store.lastEventSequence): a new endpoint is owed the events after it. */
  eventHead: () => Promise<number>;
}

const EVENT_PATTERN = /^[a-z0-9_.*-]{1,100}$/;

export function signingSecrets(record: StoredRecord): SigningSecret[] {
  try {
    return JSON.parse(String(record.signing_secrets ?? '[]')) as SigningSecret[];
  } catch {
    return [];
  }
}

async function checked(values: Record<string, unknown>, options: WebhookEndpointOptions): Promise<void> {
  const details: Array<{ field: string; message: string; value?: unknown }> = [];
  if (typeof values.url === 'string') {
    const reason = await options.checkUrl(values.url);
    if (reason) details.push({ field: 'url', message: reason, value: values.url });
  }
  if (Array.isArray(values.events)) {
    (values.events as unknown[]).forEach((p, i) => {
      if (typeof p !== 'string' || !EVENT_PATTERN.test(p)) details.push({ field: `events[${i}]`, message: 'must be an event type, * matching any characters (order.*)', value: p });
    });
  }
  if (values.api_version !== undefined && values.api_version !== null && !options.versionDates.includes(String(values.api_version))) {
    details.push({ field: 'api_version', message: `must be one of ${options.versionDates.join(', ')}`, value: values.api_version });
  }
  if (details.length) throw new AppError('VALIDATION_ERROR', 'The webhook endpoint is not valid.', { details });
}

export function webhookEndpointsResource(options: WebhookEndpointOptions): ResourceDef {
  return defineResource({
    name: WEBHOOK_ENDPOINTS,
    singular: 'webhook_endpoint',
    // Changes of endpoints are configuration, not domain events; an event about them would also be delivered to them.
    events: false,
    fields: {
      // The patterns state the form (in the schema, in OpenAPI); the hooks check what a pattern cannot (addresses, versions served).
      url: f.string({ required: true, pattern: '^https://', maxLength: 2048, description: 'The https:// URL deliveries are POSTed to.' }),
      events: f.strings({ default: ['*'], maxItems: 50, pattern: EVENT_PATTERN.source, description: 'Event types to deliver, `*` matching any characters (`order.*`).' }),
      description: f.string({ maxLength: 500 }),
      api_version: f.string({
        pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
        description: 'The release date of the version payloads are rendered in (the current one by default).',
      }),
      status: f.enum(['enabled', 'disabled'], { default: 'enabled', filterable: true }),
      disabled_reason: f.string({ readOnly: true }),
      signing_secrets: f.string({ hidden: true }),
      /** When deliveries to it started failing without a success since; five days of it disable the endpoint. */
      failing_since: f.timestamp({ hidden: true }),
      /**
       * The log's head just before the endpoint was created: it is owed every matching event after it, whenever a
       * worker first runs (DESIGN §9; src/events/dispatch-positions.ts). Null on endpoints made by earlier builds.
       */
      events_after: f.integer({ hidden: true }),
    },
    permissions: { read: ['admin'], create: ['admin'], update: ['admin'], delete: ['admin'] },
    actions: {
      'rotate-secret': {
        method: 'POST',
        allow: ['admin'],
        description: 'Issues a new signing secret (shown once); for 24 hours deliveries are signed with the old and the new one.',
        run: (record, ctx) => {
          const secret = options.newSecret();
          ctx.reveal.secret = secret;
          const until = new Date(Date.parse(ctx.now) + ROTATION_OVERLAP_MS).toISOString();
          const kept = signingSecrets(record)
            .filter((s) => s.until === null || s.until > ctx.now)
            .map((s) => ({ sealed: s.sealed, until: s.until ?? until }));
          return { signing_secrets: JSON.stringify([{ sealed: options.seal(secret), until: null }, ...kept]) };
        },
      },
    },
    hooks: {
      // Read before the creating transaction opens, so on every store it is a committed head: each event written
      // after the endpoint's creation is above it (and at most a few written during it are too: sent, not lost).
      async prepare(values) {
        return { ...values, events_after: await options.eventHead() };
      },
      async beforeCreate(values, ctx) {
        await checked(values, options);
        const secret = options.newSecret();
        ctx.reveal.secret = secret;
        return { ...values, api_version: values.api_version ?? options.versionDates[0], signing_secrets: JSON.stringify([{ sealed: options.seal(secret), until: null }]) };
      },
      async beforeUpdate(values, current) {
        await checked(values, options);
        // Enabling an endpoint again starts its failure clock anew.
        if (values.status === 'enabled' && current.status !== 'enabled') return { ...values, disabled_reason: null, failing_since: null };
        return values;
      },
    },
  });
}
