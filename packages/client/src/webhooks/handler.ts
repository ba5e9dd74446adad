// createWebhookHandler: a webhook receiver for Node's http (and raw bodies from Fastify or Express) that verifies, deduplicates, answers at once and handles the event after (DESIGN §9; conventions spec §6).
import type { WebhookEvent } from '../event.js';
import { MemorySeenStore, type SeenStore } from './seen-store.js';
import { createVerifier, header, WebhookVerificationError, type VerifyOptions, type WebhookHeaders, type WebhookSecrets } from './verify.js';

/**
 * The part of Node's `IncomingMessage` the handler uses, as a structural type (no `node:` import: the module
 * compiles with the DOM's types alone). `body`, when a framework has read the raw body already (Express's
 * `express.raw()`, a Fastify content-type parser with `parseAs: 'buffer'`), is used instead of the stream.
 */
export interface WebhookRequest {
  method?: string | undefined;
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  body?: unknown;
  /** True once the stream was read to its end by someone else (a body parser). */
  readableEnded?: boolean;
  on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
}

/** The part of Node's `ServerResponse` the handler uses. */
export interface WebhookResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
}

/** What Canon sent besides the event: the Standard Webhooks headers' values. */
export interface Delivery {
  /** `webhook-id`: the event id, by which duplicates are recognised. */
  id: string;
  /** `webhook-timestamp`: when this attempt was signed (Unix seconds). */
  timestamp: number;
}

/** An event whose handling failed: park it (a table, a queue) to replay once the cause is fixed. */
export interface DeadLetter<TEvent> {
  event: TEvent;
  delivery: Delivery;
  /** What onEvent threw or rejected with. */
  error: unknown;
  /** When the delivery was received. */
  receivedAt: Date;
}

export type WebhookHandlerOptions<TEvent> = WebhookSecrets &
  VerifyOptions & {
    /** Handles one verified, first-seen event; runs after the answer was sent. A throw or rejection goes to `deadLetter`. */
    onEvent: (event: TEvent, delivery: Delivery) => void | Promise<void>;
    /** Receives the events onEvent failed on (default: logged with console.error). */
    deadLetter?: (failure: DeadLetter<TEvent>) => void | Promise<void>;
    /** Remembers handled delivery ids (default: {@link MemorySeenStore}, 10,000 ids for 24 h, this process only). */
    seen?: SeenStore;
    /** The largest body accepted, in bytes (default 1 MiB; Canon sends at most 64 KiB, larger events thin). */
    maxBodyBytes?: number;
  };

/** The handler's answer, for frameworks that write it themselves (see `receive`). */
export interface WebhookReceipt {
  status: number;
  headers: Record<string, string>;
  /** A short JSON body: `{"received":true}`, or the uniform error object (spec §7) saying why not. */
  body: string;
}

export interface WebhookHandler {
  /** Node's `http.createServer(handler)` or a route's `(req, res)`. Never throws; always answers. */
  (req: WebhookRequest, res: WebhookResponse): void;
  /**
   * The same for a request whose raw body you already hold (any framework): verifies, deduplicates and
   * schedules `onEvent` to run after the current task, then resolves with the answer to send at once.
   */
  receive(input: { headers: WebhookHeaders; body: string | Uint8Array }): Promise<WebhookReceipt>;
  /** Resolves once every onEvent started so far has settled (and its dead letter, if any): for shutdown and tests. */
  drain(): Promise<void>;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const JSON_TYPE = { 'content-type': 'application/json' };

function answer(status: number, body: unknown, headers: Record<string, string> = {}): WebhookReceipt {
  return { status, headers: { ...JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

function refusal(status: number, code: string, message: string, headers?: Record<string, string>): WebhookReceipt {
  return answer(status, { error: { code, message } }, headers);
}

function defaultDeadLetter(failure: DeadLetter<unknown>): void {
  console.error(`canon-client: onEvent failed for webhook ${failure.delivery.id}; no deadLetter is configured`, failure.error);
}

/**
 * A receiver for one endpoint (or several sharing the handler, with `secrets`). For each POST: reads the raw body
 * (at most `maxBodyBytes`, else 413), verifies it (401 on a bad or missing signature, or a timestamp outside the
 * tolerance), records its `webhook-id` in `seen` (a duplicate is answered 200 and not handled again), answers 200
 * at once, then runs `onEvent`; what it throws goes to `deadLetter`. Canon retries anything but a 2xx, so a
 * failure of the seen store answers 503 and the delivery comes again.
 */
export function createWebhookHandler<TEvent = WebhookEvent>(options: WebhookHandlerOptions<TEvent>): WebhookHandler {
  const verify = createVerifier(options, options);
  const seen = options.seen ?? new MemorySeenStore();
  const deadLetter = options.deadLetter ?? (defaultDeadLetter as (failure: DeadLetter<TEvent>) => void);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (typeof options.onEvent !== 'function') throw new TypeError('createWebhookHandler needs onEvent');
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) throw new RangeError(`maxBodyBytes is a whole number of bytes, not ${maxBodyBytes}`);
  const running = new Set<Promise<void>>();

  /** Runs onEvent on a later task, so the answer is written first; failures to the dead letter, which may fail too. */
  const schedule = (event: TEvent, delivery: Delivery): void => {
    const receivedAt = new Date();
    const task = new Promise<void>((resolve) => setTimeout(resolve, 0))
      .then(() => options.onEvent(event, delivery))
      .catch(async (error: unknown) => {
        try {
          await deadLetter({ event, delivery, error, receivedAt });
        } catch (lost) {
          console.error(`canon-client: deadLetter failed for webhook ${delivery.id}`, lost, 'while handling', error);
        }
      })
      .finally(() => running.delete(task));
    running.add(task);
  };

  const receive = async (input: { headers: WebhookHeaders; body: string | Uint8Array }): Promise<WebhookReceipt> => {
    let event: TEvent;
    try {
      event = await verify<TEvent>(input.headers, input.body);
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      // Signed but not an event: not a forgery, and sending it again will not help.
      if (err.reason === 'invalid_payload') return refusal(400, 'INVALID_WEBHOOK_PAYLOAD', err.message);
      return refusal(401, 'INVALID_WEBHOOK_SIGNATURE', err.message);
    }
    // Verified, so these headers are present and well-formed.
    const id = header(input.headers, 'webhook-id')!;
    const delivery: Delivery = { id, timestamp: Number(header(input.headers, 'webhook-timestamp')) };
    let first: boolean;
    try {
      first = await seen.add(id);
    } catch {
      // Unknown whether it was handled: Canon's retry decides, after the store recovers.
      return refusal(503, 'SEEN_STORE_UNAVAILABLE', 'The receiver could not record the delivery; send it again later.', { 'retry-after': '5' });
    }
    if (!first) return answer(200, { received: true, duplicate: true });
    schedule(event, delivery);
    return answer(200, { received: true });
  };

  const handler = ((req: WebhookRequest, res: WebhookResponse): void => {
    const send = (receipt: WebhookReceipt): void => {
      try {
        res.statusCode = receipt.status;
        for (const [name, value] of Object.entries(receipt.headers)) res.setHeader(name, value);
        res.end(receipt.body);
      } catch {
        // The connection is gone: Canon retries a delivery it got no answer for.
      }
    };
    if ((req.method ?? 'POST').toUpperCase() !== 'POST') {
      send(refusal(405, 'METHOD_NOT_ALLOWED', 'A webhook is delivered with POST.', { allow: 'POST' }));
      return;
    }
    void readRawBody(req, maxBodyBytes)
      .then((body) => {
        if (body === 'too_large') return refusal(413, 'PAYLOAD_TOO_LARGE', `The body exceeds ${maxBodyBytes} bytes.`, { connection: 'close' });
        if (body === 'not_raw') {
          return refusal(500, 'RAW_BODY_REQUIRED', 'The body was parsed before the webhook handler saw it: the signature covers the raw bytes. Give the handler the raw body.');
        }
        return receive({ headers: req.headers, body });
      })
      .catch(() => refusal(500, 'WEBHOOK_RECEIVER_ERROR', 'The receiver failed to read or verify the delivery.'))
      .then(send);
  }) as WebhookHandler;
  handler.receive = receive;
  handler.drain = async () => {
    while (running.size > 0) await Promise.all(running);
  };
  return handler;
}

const encoder = new TextEncoder();

/**
 * The request's raw body: one a framework already read (a string or bytes on `req.body`), or the stream read to
 * its end, refusing more than `max` bytes (by Content-Length at once, else as they arrive: the rest is drained
 * unread). 'not_raw' when a body parser consumed the stream and left only its parsed value.
 */
function readRawBody(req: WebhookRequest, max: number): Promise<Uint8Array | string | 'too_large' | 'not_raw'> {
  const given = req.body;
  if (typeof given === 'string' || given instanceof Uint8Array) return Promise.resolve(byteLength(given) > max ? 'too_large' : given);
  if (given !== undefined || req.readableEnded === true) return Promise.resolve('not_raw');
  const declared = Number(header(req.headers, 'content-length'));
  if (declared > max) return Promise.resolve('too_large');
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk) => {
      if (over) return;
      const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
      size += bytes.length;
      if (size > max) {
        over = true;
        chunks.length = 0;
        resolve('too_large');
        return;
      }
      chunks.push(bytes);
    });
    req.on('end', () => {
      if (over) return;
      const body = new Uint8Array(size);
      let at = 0;
      for (const chunk of chunks) {
        body.set(chunk, at);
        at += chunk.length;
      }
      resolve(body);
    });
    req.on('error', reject);
    // A connection closed before the end (the sender gave up): nothing to answer; settles the read.
    req.on('close', () => reject(new Error('the request closed before its body ended')));
  });
}

function byteLength(body: string | Uint8Array): number {
  return typeof body === 'string' ? encoder.encode(body).length : body.length;
}
