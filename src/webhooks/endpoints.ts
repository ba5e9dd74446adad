// The /webhook-endpoints platform resource (DESIGN §9, spec §6.1): principals register https receivers of their own; the signing secret is shown once and kept sealed.
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
  /** The resource principals act for: an endpoint belongs to one of its objects, or to the platform. */
  users: string;
  /** The event log's head (Store.lastEventSequence): a new endpoint is owed the events after it. */
  eventHead: () => Promise<number>;
}

/** A consumer-supplied secret (spec §6.1): `whsec_` and the standard base64 of 24 to 64 random bytes, as Standard Webhooks libraries read it. */
const SECRET_SHAPE = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
const SECRET_BYTES = { min: 24, max: 64 };

/** Why a consumer-supplied secret cannot sign, or null when it can. */
function secretProblem(secret: string): string | null {
  if (!SECRET_SHAPE.test(secret)) return 'must be whsec_ followed by standard base64';
  const bytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
  // Re-encoding catches padding and trailing bits Node's lenient decoder would otherwise drop in silence.
  if (bytes.toString('base64') !== secret.slice('whsec_'.length)) return 'must be whsec_ followed by canonical standard base64';
  if (bytes.length < SECRET_BYTES.min || bytes.length > SECRET_BYTES.max) return `must encode ${SECRET_BYTES.min} to ${SECRET_BYTES.max} bytes (it encodes ${bytes.length})`;
  return null;
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
  if (typeof values.secret === 'string') {
    // The secret itself is never echoed into an error: it is one.
    const problem = secretProblem(values.secret);
    if (problem) details.push({ field: 'secret', message: problem });
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
      /**
       * Whose endpoint it is: a non-admin's own (set from the caller), or a user an admin names; none is the
       * platform's. Deliveries carry only what its owner may see with GET /events at the time of sending.
       */
      user_id: f.uuid({ createOnly: true, filterable: true, references: options.users, description: 'The user the endpoint belongs to; none means the platform (admins).' }),
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
      secret: f.string({
        writeOnly: true,
        virtual: true,
        createOnly: true,
        maxLength: 100,
        description: 'Your own signing secret (whsec_ and the base64 of 24 to 64 random bytes); one is generated when omitted.',
      }),
      signing_secrets: f.string({ hidden: true }),
      /**
       * The scopes of the credential that created it (none: unrestricted): deliveries never carry more than that
       * credential could read, whatever the owner's other credentials may.
       */
      scopes: f.strings({ hidden: true }),
      /** When deliveries to it started failing without a success since; five days of it disable the endpoint. */
      failing_since: f.timestamp({ hidden: true }),
      /**
       * The log's head just before the endpoint was created: it is owed every matching event after it, whenever a
       * worker first runs (DESIGN §9; src/webhooks/dispatch-positions.ts). Null on endpoints made by earlier builds.
       */
      events_after: f.integer({ hidden: true }),
    },
    ownership: { field: 'user_id' },
    // An owner's endpoints go with it; its deliveries with them.
    belongsTo: [{ resource: options.users, field: 'user_id', onDelete: 'cascade' }],
    // Any principal with webhook-endpoints:write registers its own (spec §6.1); admins see and manage every one.
    revealed: { secret: { description: 'The signing secret (`whsec_…`), shown once: when the endpoint is created and when it is rotated.' } },
    permissions: { read: ['admin', 'owner'], create: ['admin', 'owner'], update: ['admin', 'owner'], delete: ['admin', 'owner'] },
    actions: {
      'rotate-secret': {
        method: 'POST',
        allow: ['admin', 'owner'],
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
        const { secret: supplied, ...rest } = values;
        const secret = typeof supplied === 'string' ? supplied : options.newSecret();
        ctx.reveal.secret = secret;
        return {
          ...rest,
          api_version: values.api_version ?? options.versionDates[0],
          signing_secrets: JSON.stringify([{ sealed: options.seal(secret), until: null }]),
          scopes: [...ctx.principal.scopes],
        };
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
