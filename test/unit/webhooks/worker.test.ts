// The webhook worker against a real store and a recording sender: thin payloads, secrets in rotation, five days of failures, unpreparable deliveries.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { Ajv } from 'ajv';
import { thinEventSchema } from '../../../src/catalog/event-catalog.js';
import { WebhookWorker } from '../../../src/webhooks/worker.js';
import { compileModel, type CompiledModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { openStore } from '../../../src/runtime/open-store.js';
import type { Store } from '../../../src/store/types.js';
import type { SendInput, SendOutcome } from '../../../src/webhooks/sender.js';
import { eventually } from '../../support/eventually.js';

const DAY = 86_400_000;

class RecordingSender {
  sent: SendInput[] = [];
  answer: (input: SendInput) => SendOutcome = () => ({ ok: true, statusCode: 200, durationMs: 1, error: null, gone: false });
  async send(input: SendInput): Promise<SendOutcome> {
    this.sent.push(input);
    return this.answer(input);
  }
}

describe('the webhook worker', () => {
  let store: Store;
  let model: CompiledModel;
  let now = Date.UTC(2026, 10, 25, 12, 0, 0);
  const sender = new RecordingSender();
  let worker: WebhookWorker;
  /** Secrets are "sealed" as themselves here, except those the test makes unopenable. */
  const open = (sealed: string): string => {
    if (sealed.startsWith('broken')) throw new Error('sealed under another CANON_SECRET');
    return sealed;
  };

  before(async () => {
    model = compileModel(withPlatform(commerce));
    store = (await openStore('sqlite::memory:')).store;
    await store.migrate(model);
    worker = new WebhookWorker(
      store,
      model,
      sender,
      open,
      () => new Date(now),
      { schedule: [0, 0, 0, 0, 0, 0], leaseMs: 30_000, batch: 50, concurrency: 4, pollMs: 20, maxPayloadBytes: 64 * 1024, failureWindowMs: 5 * DAY, random: () => 0.5 },
      { warn: () => undefined },
    );
    worker.start();
    // The first round places the dispatcher at the log's head.
    await eventually(async () => (await store.get('webhook-dispatch', '00000000-0000-7000-8000-000000000001')) ?? undefined, 'the dispatcher position');
  });
  after(async () => {
    await worker.stop();
    await store.close();
  });

  const endpoint = async (events: string[], secrets: Array<{ sealed: string; until: string | null }>): Promise<string> => {
    const id = randomUUID();
    const at = new Date(now).toISOString();
    await store.transaction((tx) =>
      tx.insert('webhook-endpoints', {
        id,
        version: 1,
        created_at: at,
        updated_at: at,
        url: `https://receiver.example/${id}`,
        events,
        description: null,
        api_version: '2026-03-01',
        status: 'enabled',
        disabled_reason: null,
        signing_secrets: JSON.stringify(secrets),
        failing_since: null,
      }),
    );
    return id;
  };
  const event = async (type: string, object: Record<string, unknown>): Promise<string> => {
    const id = randomUUID();
    await store.transaction((tx) =>
      tx.appendEvent({
        id,
        type,
        resource: 'products',
        object_id: String(object.id),
        owner_id: null,
        api_version: '2026-03-01',
        created_at: new Date(now).toISOString(),
        data: { object },
      }),
    );
    worker.wake();
    return id;
  };
  const sentFor = (eventId: string) => eventually(async () => sender.sent.find((s) => s.id === eventId), `a send of ${eventId}`);

  it('sends a payload over 64 KiB thin: the id, the type and where to fetch the object', async () => {
    await endpoint(['thin.*'], [{ sealed: 'whsec_thin', until: null }]);
    const objectId = randomUUID();
    const id = await event('thin.created', { id: objectId, description: 'x'.repeat(70_000) });
    const body = JSON.parse((await sentFor(id)).body);
    assert.equal(body.thin, true);
    assert.equal(body.type, 'thin.created');
    assert.deepEqual(body.data.object, { id: objectId, url: `/v2/products/${objectId}` });
    // The catalog's thin form (the OpenAPI document's ThinEvent) describes exactly this body.
    const thin = new Ajv({ strict: false }).compile(thinEventSchema());
    assert.equal(thin(body), true, JSON.stringify(thin.errors));
    const small = await event('thin.updated', { id: objectId, name: 'small' });
    const full = JSON.parse((await sentFor(small)).body);
    assert.equal(full.thin, undefined);
    assert.equal(full.data.object.name, 'small');
  });

  it('signs with every secret still live: a rotated-out one until its end, not after', async () => {
    const future = new Date(now + DAY).toISOString();
    const past = new Date(now - 1000).toISOString();
    await endpoint(
      ['rotating.*'],
      [
        { sealed: 'whsec_new', until: null },
        { sealed: 'whsec_old', until: future },
        { sealed: 'whsec_older', until: past },
      ],
    );
    const id = await event('rotating.created', { id: randomUUID() });
    assert.deepEqual((await sentFor(id)).secrets, ['whsec_new', 'whsec_old']);
  });

  it('an endpoint failing for five days without a success is disabled', async () => {
    const endpointId = await endpoint(['failing.*'], [{ sealed: 'whsec_f', until: null }]);
    sender.answer = (input) =>
      input.url.endsWith(endpointId)
        ? { ok: false, statusCode: 500, durationMs: 1, error: 'HTTP 500', gone: false }
        : { ok: true, statusCode: 200, durationMs: 1, error: null, gone: false };
    await event('failing.created', { id: randomUUID() });
    const first = await eventually(async () => {
      const e = await store.get('webhook-endpoints', endpointId);
      return e?.failing_since ? e : undefined;
    }, 'the failure clock');
    assert.equal(first.status, 'enabled');
    now += 5 * DAY + 1000;
    await event('failing.updated', { id: randomUUID() });
    const disabled = await eventually(async () => {
      const e = await store.get('webhook-endpoints', endpointId);
      return e?.status === 'disabled' ? e : undefined;
    }, 'the endpoint disabled');
    assert.match(String(disabled.disabled_reason), /5 days/);
    sender.answer = () => ({ ok: true, statusCode: 200, durationMs: 1, error: null, gone: false });
  });

  it('a delivery that cannot be prepared fails alone with its reason; the worker goes on', async () => {
    const broken = await endpoint(['prepared.*'], [{ sealed: 'broken-secret', until: null }]);
    const fine = await endpoint(['prepared.*'], [{ sealed: 'whsec_fine', until: null }]);
    const id = await event('prepared.created', { id: randomUUID() });
    await sentFor(id);
    const failed = await eventually(async () => {
      const { rows } = await store.list('webhook-deliveries', { where: [{ path: 'endpoint_id', op: 'eq', value: broken }], orderBy: [{ path: 'id', desc: false }], limit: 10 });
      return rows[0]?.status === 'failed' ? rows[0] : undefined;
    }, 'the unpreparable delivery failed');
    const attempts = failed.attempts as Array<{ error: string }>;
    assert.match(attempts[attempts.length - 1]!.error, /not sent: sealed under another CANON_SECRET/);
    assert.ok(sender.sent.some((s) => s.url.endsWith(fine) && s.id === id));
    assert.equal(worker.ok, true);
  });
});
