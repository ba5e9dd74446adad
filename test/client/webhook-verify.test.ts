// canon-client's verifyWebhook: deliveries signed by a real Canon worker verify (rotation included), tampered or stale ones are refused, and it agrees with the official standardwebhooks library both ways.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { createVerifier, verifyWebhook, WebhookVerificationError, type WebhookVerificationReason } from '../../packages/client/src/webhooks/index.js';
import type { CanonEvent, WebhookEvent } from '../../packages/client/src/event.js';
import { useHmac, webCryptoHmac, type HmacSha256 } from '../../packages/client/src/webhooks/hmac.js';
import { nodeHmac } from '../../packages/client/src/webhooks/hmac-node.js';
import { all, STORES, type Json } from '../e2e/webhooks/api.js';
import { eventually } from '../support/eventually.js';
import { capture, startReceiverRig, type Captured, type ReceiverRig } from './webhook-rig.js';

const PATIENCE_MS = 15_000;

function newSecret(bytes = 32): string {
  return `whsec_${randomBytes(bytes).toString('base64')}`;
}

/** Asserts that `promise` rejects with a WebhookVerificationError of `reason`. */
async function refused(promise: Promise<unknown>, reason: WebhookVerificationReason): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof WebhookVerificationError, `a WebhookVerificationError, not ${String(err)}`);
    assert.equal(err.reason, reason, err.message);
    return true;
  });
}

/** What standardwebhooks says of a delivery: the event, or null when it refuses it. */
function official(secret: string, body: string, headers: Record<string, string>): unknown {
  try {
    return new Webhook(secret).verify(body, headers);
  } catch {
    return null;
  }
}

for (const store of STORES) {
  describe(`verifyWebhook on deliveries from a real Canon worker (${store})`, () => {
    let rig: ReceiverRig;
    before(async () => {
      rig = await startReceiverRig(store);
    });
    after(async () => rig?.close());

    /** Registers an endpoint, creates a product, and returns the endpoint and the product's delivery as received. */
    const deliveryOfNewProduct = async (received: Captured[], secret?: string) => {
      const made = await rig.product();
      const delivery = await eventually(
        async () => received.find((r) => (JSON.parse(r.body.toString('utf8')) as Json).data.object.id === made.id),
        `the delivery of product ${made.id}`,
        PATIENCE_MS,
        50,
      );
      return { made, delivery, secret };
    };

    it('a delivery verifies with the endpoint’s secret, as a string, as bytes and with fetch Headers, and is the event GET /events lists', async () => {
      const received: Captured[] = [];
      const ep = await rig.endpoint(() => capture(received), ['product.created']);
      try {
        const { made, delivery } = await deliveryOfNewProduct(received);
        const text = delivery.body.toString('utf8');
        const event = await verifyWebhook<CanonEvent>({ secret: ep.secret, headers: delivery.headers, body: text });
        assert.deepEqual(event, JSON.parse(text));
        assert.equal(event.type, 'product.created');
        assert.equal(event.data.object.id, made.id);
        assert.equal(event.id, delivery.headers['webhook-id'], 'webhook-id is the event id');
        const listed = (await all(rig.canon.url, '/events?type=product.created&limit=100')).find((e) => e.data.object.id === made.id);
        assert.deepEqual(event, listed, 'the delivered event is the listed one');

        const fromBytes = await verifyWebhook({ secret: ep.secret, headers: delivery.headers, body: new Uint8Array(delivery.body) });
        assert.deepEqual(fromBytes, event);
        const fetchHeaders = new Headers();
        for (const [name, value] of Object.entries(delivery.headers)) if (typeof value === 'string') fetchHeaders.set(name, value);
        assert.deepEqual(await verifyWebhook({ secret: ep.secret, headers: fetchHeaders, body: text }), event);
        // The official library agrees.
        assert.deepEqual(official(ep.secret, text, delivery.headers as Record<string, string>), event);
      } finally {
        await rig.retire(ep);
      }
    });

    it('a tampered body, another secret, an old or a future timestamp, a missing header: refused, as the official library refuses them', async () => {
      const received: Captured[] = [];
      const ep = await rig.endpoint(() => capture(received), ['product.created']);
      try {
        const { delivery } = await deliveryOfNewProduct(received);
        const text = delivery.body.toString('utf8');
        const headers = delivery.headers as Record<string, string>;
        const tampered = text.replace('"amount":990', '"amount":1');
        assert.notEqual(tampered, text);
        await refused(verifyWebhook({ secret: ep.secret, headers, body: tampered }), 'no_matching_signature');
        assert.equal(official(ep.secret, tampered, headers), null);
        // One byte more: whitespace after the JSON changes the signed bytes too.
        await refused(verifyWebhook({ secret: ep.secret, headers, body: `${text} ` }), 'no_matching_signature');
        const other = newSecret();
        await refused(verifyWebhook({ secret: other, headers, body: text }), 'no_matching_signature');
        assert.equal(official(other, text, headers), null);
        // The id and timestamp are signed: moving either breaks the signature.
        await refused(verifyWebhook({ secret: ep.secret, headers: { ...headers, 'webhook-id': `${headers['webhook-id']}x` }, body: text }), 'no_matching_signature');
        const signedAt = Number(headers['webhook-timestamp']) * 1000;
        await refused(verifyWebhook({ secret: ep.secret, headers: { ...headers, 'webhook-timestamp': String(signedAt / 1000 + 1) }, body: text }), 'no_matching_signature');

        // ±5 minutes by default: exactly 300 s either way passes, 301 s does not.
        const at = (ms: number) => () => signedAt + ms;
        assert.ok(await verifyWebhook({ secret: ep.secret, headers, body: text, now: at(300_000) }));
        assert.ok(await verifyWebhook({ secret: ep.secret, headers, body: text, now: at(-300_000) }));
        await refused(verifyWebhook({ secret: ep.secret, headers, body: text, now: at(301_000) }), 'timestamp_too_old');
        await refused(verifyWebhook({ secret: ep.secret, headers, body: text, now: at(-301_000) }), 'timestamp_too_new');
        await refused(verifyWebhook({ secret: ep.secret, headers, body: text, now: at(61_000), tolerance: 60 }), 'timestamp_too_old');

        for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
          const without = { ...headers };
          delete without[name];
          await refused(verifyWebhook({ secret: ep.secret, headers: without, body: text }), 'missing_headers');
          assert.equal(official(ep.secret, text, without), null);
        }
        await refused(verifyWebhook({ secret: ep.secret, headers: { ...headers, 'webhook-timestamp': '17e8' }, body: text }), 'invalid_timestamp');
        // Only v1 signatures count: the same bytes under another version tag are not checked.
        const v2 = headers['webhook-signature']!.replace(/^v1,/, 'v2,');
        await refused(verifyWebhook({ secret: ep.secret, headers: { ...headers, 'webhook-signature': v2 }, body: text }), 'no_matching_signature');
      } finally {
        await rig.retire(ep);
      }
    });

    it('during a secret rotation the delivery carries two signatures: the old secret, the new one, or a list holding either verifies', async () => {
      const received: Captured[] = [];
      const ep = await rig.endpoint(() => capture(received), ['product.created']);
      try {
        const rotated = await rig.api('POST', `/v2/webhook-endpoints/${ep.id}/rotate-secret`);
        assert.equal(rotated.status, 200, rotated.text);
        const fresh = rotated.body.secret as string;
        assert.notEqual(fresh, ep.secret);
        const { delivery } = await deliveryOfNewProduct(received);
        const text = delivery.body.toString('utf8');
        const headers = delivery.headers as Record<string, string>;
        assert.equal(headers['webhook-signature']!.split(' ').length, 2, headers['webhook-signature']);
        const expected = JSON.parse(text) as WebhookEvent;
        assert.deepEqual(await verifyWebhook({ secret: ep.secret, headers, body: text }), expected);
        assert.deepEqual(await verifyWebhook({ secret: fresh, headers, body: text }), expected);
        assert.deepEqual(await verifyWebhook({ secrets: [newSecret(), fresh], headers, body: text }), expected);
        await refused(verifyWebhook({ secrets: [newSecret(), newSecret(48)], headers, body: text }), 'no_matching_signature');
        // Each signature on its own header line (a proxy splitting it) verifies the same.
        const split = { ...headers, 'webhook-signature': headers['webhook-signature']!.split(' ') };
        assert.deepEqual(await verifyWebhook({ secret: fresh, headers: split, body: text }), expected);
      } finally {
        await rig.retire(ep);
      }
    });
  });
}

/** Both HMACs the package ships: Web Crypto (its portable entry) and Node's crypto (what Node loads: src/node.ts). */
const IMPLEMENTATIONS: Array<[string, HmacSha256]> = [
  ['Web Crypto', webCryptoHmac],
  ['node:crypto', nodeHmac],
];

for (const [implName, impl] of IMPLEMENTATIONS)
  describe(`verifyWebhook and the standardwebhooks library, on generated messages (${implName})`, () => {
    before(() => useHmac(impl));
    after(() => useHmac(webCryptoHmac));
    const secretArb = fc.uint8Array({ minLength: 24, maxLength: 64 }).map((bytes) => `whsec_${Buffer.from(bytes).toString('base64')}`);
    const idArb = fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/);
    const bodyArb = fc.string({ unit: 'grapheme', maxLength: 300 }).map((s) => JSON.stringify({ id: 'evt', type: 'product.created', note: s }));

    it('what the official library signs, verifyWebhook accepts (string and bytes bodies)', async () => {
      await fc.assert(
        fc.asyncProperty(secretArb, idArb, bodyArb, fc.integer({ min: -290, max: 290 }), async (secret, id, body, skew) => {
          const timestamp = new Date((Math.floor(Date.now() / 1000) + skew) * 1000);
          const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp.getTime() / 1000), 'webhook-signature': new Webhook(secret).sign(id, timestamp, body) };
          assert.deepEqual(await verifyWebhook({ secret, headers, body }), JSON.parse(body));
          assert.deepEqual(await verifyWebhook({ secret, headers, body: new TextEncoder().encode(body) }), JSON.parse(body));
        }),
        { numRuns: 200 },
      );
    });

    it('on changed messages, verifyWebhook accepts exactly when the official library does', async () => {
      type Change = 'none' | 'body' | 'id' | 'timestamp' | 'secret' | 'signature';
      const changeArb = fc.constantFrom<Change>('none', 'body', 'id', 'timestamp', 'secret', 'signature');
      let accepted = 0;
      let refusedCount = 0;
      await fc.assert(
        fc.asyncProperty(secretArb, secretArb, idArb, bodyArb, changeArb, fc.nat(), async (secret, otherSecret, id, body, change, at) => {
          const seconds = Math.floor(Date.now() / 1000);
          const signature = new Webhook(secret).sign(id, new Date(seconds * 1000), body);
          const headers: Record<string, string> = { 'webhook-id': id, 'webhook-timestamp': String(seconds), 'webhook-signature': signature };
          let verifyWith = secret;
          let sent = body;
          if (change === 'body') sent = `${body.slice(0, at % (body.length + 1))}x${body.slice(at % (body.length + 1))}`;
          if (change === 'id') headers['webhook-id'] = `${id}x`;
          if (change === 'timestamp') headers['webhook-timestamp'] = String(seconds - 1 - (at % 200));
          if (change === 'secret') verifyWith = otherSecret;
          if (change === 'signature') {
            // One base64 character of the MAC replaced by another.
            const i = 3 + (at % 43);
            const c = signature[i] === 'A' ? 'B' : 'A';
            headers['webhook-signature'] = `${signature.slice(0, i)}${c}${signature.slice(i + 1)}`;
          }
          const theirs = official(verifyWith, sent, headers) !== null;
          let ours: boolean;
          try {
            await verifyWebhook({ secret: verifyWith, headers, body: sent });
            ours = true;
          } catch (err) {
            if (!(err instanceof WebhookVerificationError)) throw err;
            ours = false;
          }
          assert.equal(ours, theirs, `change ${change}: ours ${ours}, standardwebhooks ${theirs}`);
          if (ours) accepted++;
          else refusedCount++;
        }),
        { numRuns: 300 },
      );
      assert.ok(accepted > 0 && refusedCount > 0, `both outcomes were exercised: ${accepted} accepted, ${refusedCount} refused`);
    });

    it('a malformed secret is a TypeError, not a refused delivery; a signed body that is not an event is invalid_payload', async () => {
      const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAA' };
      for (const secret of ['whsec_', 'whsec_not base64!', 'whsec_abc']) {
        await assert.rejects(verifyWebhook({ secret, headers, body: '{}' }), TypeError, secret);
      }
      await assert.rejects(verifyWebhook({ secrets: [], headers, body: '{}' }), TypeError);
      const secret = newSecret();
      const wh = new Webhook(secret);
      const at = new Date(Math.floor(Date.now() / 1000) * 1000);
      for (const body of ['not json', '[1,2]', '{"id":"x"}']) {
        const signed = { ...headers, 'webhook-timestamp': String(at.getTime() / 1000), 'webhook-signature': wh.sign('msg_1', at, body) };
        await refused(verifyWebhook({ secret, headers: signed, body }), 'invalid_payload');
      }
      // Bytes that are not UTF-8 cannot be an event either: signed over the bytes themselves (node:crypto), they verify and are refused as a payload.
      const bytes = Buffer.from([0x7b, 0xff, 0x7d]);
      const ts = String(at.getTime() / 1000);
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      const mac = createHmac('sha256', key)
        .update(Buffer.concat([Buffer.from(`msg_1.${ts}.`), bytes]))
        .digest('base64');
      await refused(verifyWebhook({ secret, headers: { ...headers, 'webhook-timestamp': ts, 'webhook-signature': `v1,${mac}` }, body: new Uint8Array(bytes) }), 'invalid_payload');
    });
  });

describe('switching the HMAC after keys were prepared', () => {
  after(() => useHmac(webCryptoHmac));
  it('keys prepared by one implementation are prepared again for the other (the cached set and a verifier of its own)', async () => {
    const secret = newSecret();
    const wh = new Webhook(secret);
    const body = JSON.stringify({ id: 'evt_1', type: 'product.created' });
    const at = new Date(Math.floor(Date.now() / 1000) * 1000);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(at.getTime() / 1000), 'webhook-signature': wh.sign('msg_1', at, body) };
    const verifier = createVerifier({ secret });
    const seen: string[] = [];
    const counting = (name: string, inner: HmacSha256): HmacSha256 => ({
      importKey: (raw) => inner.importKey(raw),
      sign: (key, content) => (seen.push(name), inner.sign(key, content)),
    });
    const web = counting('web', webCryptoHmac);
    const node = counting('node', nodeHmac);
    useHmac(web);
    assert.deepEqual(await verifyWebhook({ secret, headers, body }), JSON.parse(body));
    assert.deepEqual(await verifier(headers, body), JSON.parse(body));
    useHmac(node);
    assert.deepEqual(await verifyWebhook({ secret, headers, body }), JSON.parse(body));
    assert.deepEqual(await verifier(headers, body), JSON.parse(body));
    await refused(verifyWebhook({ secret, headers, body: body.replace('evt_1', 'evt_2') }), 'no_matching_signature');
    assert.deepEqual(seen, ['web', 'web', 'node', 'node', 'node']);
  });
});
