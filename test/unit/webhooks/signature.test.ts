// Issue 15 (DESIGN §9): webhook signatures follow Standard Webhooks, checked with the official verifier (standardwebhooks), secret rotation included.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, secretKey, signatureHeaders } from '../../../src/webhooks/signature.js';

const now = (): number => Math.floor(Date.now() / 1000);
const body = JSON.stringify({ id: 'evt_1', type: 'order.created', data: { object: { id: 'ord_1', note: 'café ☕ "quoted"' } } });

describe('generateWebhookSecret and secretKey', () => {
  it('makes whsec_ + base64 of 32 random bytes, different every time', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(a, b);
    assert.equal(secretKey(a).length, 32);
    assert.deepEqual(secretKey(a), Buffer.from(a.slice('whsec_'.length), 'base64'));
  });

  const malformed: Array<[string, RegExp]> = [
    ['', /starts with whsec_/],
    ['c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0', /starts with whsec_/],
    ['whsec_', /base64/],
    ['whsec_not base64!', /base64/],
    ['whsec_YWJj', /24 to 64 bytes, not 3/],
    [`whsec_${Buffer.alloc(65).toString('base64')}`, /not 65/],
    [`whsec_${Buffer.alloc(32).toString('base64url')}`, /base64/],
    [`whsec_${Buffer.alloc(32).toString('base64').replace(/=+$/, '')}`, /base64/],
  ];
  for (const [secret, message] of malformed) it(`refuses ${JSON.stringify(secret.slice(0, 24))}…`, () => assert.throws(() => secretKey(secret), message));
});

describe('signatureHeaders, verified by the official standardwebhooks library', () => {
  it('signs one secret: header values and a signature the verifier accepts', () => {
    const secret = generateWebhookSecret();
    const timestamp = now();
    const headers = signatureHeaders({ id: 'evt_1', timestamp, body, secrets: [secret] });
    assert.deepEqual(Object.keys(headers).sort(), ['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    assert.equal(headers['webhook-id'], 'evt_1');
    assert.equal(headers['webhook-timestamp'], String(timestamp));
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  });

  it('signs with every secret during a rotation, in order; each secret alone verifies', () => {
    const [oldSecret, newSecret] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = signatureHeaders({ id: 'evt_2', timestamp: now(), body, secrets: [newSecret, oldSecret] });
    const parts = headers['webhook-signature'].split(' ');
    assert.equal(parts.length, 2);
    assert.equal(parts[0], signatureHeaders({ id: 'evt_2', timestamp: Number(headers['webhook-timestamp']), body, secrets: [newSecret] })['webhook-signature']);
    assert.equal(parts[1], signatureHeaders({ id: 'evt_2', timestamp: Number(headers['webhook-timestamp']), body, secrets: [oldSecret] })['webhook-signature']);
    assert.doesNotThrow(() => new Webhook(oldSecret).verify(body, headers));
    assert.doesNotThrow(() => new Webhook(newSecret).verify(body, headers));
    assert.throws(() => new Webhook(generateWebhookSecret()).verify(body, headers), /No matching signature/);
  });

  it('a tampered body, timestamp or id fails verification', () => {
    const secret = generateWebhookSecret();
    const timestamp = now();
    const headers = signatureHeaders({ id: 'evt_3', timestamp, body, secrets: [secret] });
    const verifier = new Webhook(secret);
    assert.throws(() => verifier.verify(body.replace('ord_1', 'ord_2'), headers), /No matching signature/);
    assert.throws(() => verifier.verify(`${body} `, headers), /No matching signature/);
    assert.throws(() => verifier.verify(body, { ...headers, 'webhook-timestamp': String(timestamp - 1) }), /No matching signature/);
    assert.throws(() => verifier.verify(body, { ...headers, 'webhook-id': 'evt_4' }), /No matching signature/);
  });

  it('a timestamp outside the receiver tolerance (5 min) is rejected by the verifier, though correctly signed', () => {
    const secret = generateWebhookSecret();
    const headers = signatureHeaders({ id: 'evt_5', timestamp: now() - 3600, body, secrets: [secret] });
    assert.throws(() => new Webhook(secret).verify(body, headers), /too old/);
  });

  it('matches the spec example computation: base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}"))', () => {
    // The example of the Standard Webhooks specification (spec/standard-webhooks.md, "Signature scheme").
    const headers = signatureHeaders({
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    });
    assert.equal(headers['webhook-signature'], 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('refuses what cannot make a valid header set', () => {
    const secret = generateWebhookSecret();
    assert.throws(() => signatureHeaders({ id: 'evt_1', timestamp: now(), body, secrets: [] }), /at least one secret/);
    assert.throws(() => signatureHeaders({ id: 'evt 1', timestamp: now(), body, secrets: [secret] }), /webhook id/);
    assert.throws(() => signatureHeaders({ id: 'evt_1\r\nx-injected: 1', timestamp: now(), body, secrets: [secret] }), /webhook id/);
    assert.throws(() => signatureHeaders({ id: 'evt_1', timestamp: 1.5, body, secrets: [secret] }), /whole Unix seconds/);
    assert.throws(() => signatureHeaders({ id: 'evt_1', timestamp: now(), body, secrets: ['whsec_x'] }), /base64/);
  });
});
