// Issue 26.9 end to end: principals register webhook endpoints of their own (optionally with their own secret) and receive only what they may see, decided at dispatch and again at each send.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { eventually } from '../../support/eventually.js';
import { ADMIN_KEY } from '../../support/harness.js';
import type { CanonProcess } from '../../support/processes.js';
import { all, call, STORES, type Json } from './api.js';
import type { Answer, Receiver } from './receiver.js';
import { startWebhookRig, type WebhookRig } from './rig.js';

/** Three attempts, the retries about 1.5 s and 2 s after a failure: time enough to change the owner in between. */
const SCHEDULE = [0, 1.5, 2];
const PATIENCE_MS = 15_000;
/** A consumer's own secret: whsec_ and the base64 of 32 bytes. */
const OWN_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

for (const store of STORES) {
  describe(`webhook endpoints of their own (${store})`, () => {
    let rig: WebhookRig;
    let receiver: Receiver;
    let canon: CanonProcess;

    before(async () => {
      rig = await startWebhookRig(store, 'webhook-owners-secret', {
        CANON_WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(','),
        CANON_WEBHOOK_TIMEOUT_MS: '2000',
      });
      ({ receiver, canon } = rig);
    });
    after(async () => rig?.close());

    const as = (key: string) => (method: string, path: string, body?: unknown) => call(canon.url, method, path, body, key);
    const admin = as(ADMIN_KEY);

    /** A user with a key of its own (its role as given). */
    const user = async (role: 'customer' | 'admin' = 'customer'): Promise<{ id: string; key: string }> => {
      const u = await admin('POST', '/v2/users', { email: `owner-${randomUUID()}@example.com`, full_name: 'Endpoint Owner', password: 'long enough password', role });
      assert.equal(u.status, 201, u.text);
      const k = await admin('POST', '/v2/api-keys', { name: 'owner key', user_id: u.body.id });
      assert.equal(k.status, 201, k.text);
      return { id: u.body.id as string, key: k.body.key as string };
    };
    /** Registers an endpoint as `key` on a fresh receiver path. */
    const register = async (key: string, events: string[], answer: (n: number) => Answer = () => 200, extra: Json = {}) => {
      const path = `/hooks/${randomUUID()}`;
      const res = await as(key)('POST', '/v2/webhook-endpoints', { url: receiver.url(path), events, ...extra });
      assert.equal(res.status, 201, res.text);
      receiver.route(path, { secrets: [res.body.secret as string], answer });
      return { id: res.body.id as string, path, body: res.body };
    };
    const order = async (key: string): Promise<string> => {
      const res = await as(key)('POST', '/v2/orders', {});
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    };
    /** Object ids of what reached a receiver path, verified. */
    const received = (path: string): string[] => receiver.to(path).map((r) => (JSON.parse(r.body) as Json).data.object.id as string);

    it('a customer registers its own endpoint, with its own secret; sees only its own; others get 404; admins see all', async () => {
      const alice = await user();
      const bob = await user();
      const mine = await register(alice.key, ['order.*'], () => 200, { secret: OWN_SECRET });
      assert.equal(mine.body.user_id, alice.id);
      assert.equal(mine.body.secret, OWN_SECRET);
      assert.equal('scopes' in mine.body, false);
      const theirs = await register(bob.key, ['order.*']);
      const listed = await as(alice.key)('GET', '/v2/webhook-endpoints?limit=100');
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(
        (listed.body.data as Json[]).map((e) => e.id),
        [mine.id],
      );
      assert.equal((await as(alice.key)('GET', `/v2/webhook-endpoints/${theirs.id}`)).status, 404);
      assert.equal((await as(alice.key)('PATCH', `/v2/webhook-endpoints/${theirs.id}`, { description: 'mine now' })).status, 404);
      assert.equal((await as(alice.key)('DELETE', `/v2/webhook-endpoints/${theirs.id}`)).status, 404);
      const everyone = await all(canon.url, '/v2/webhook-endpoints?limit=100');
      assert.ok([mine.id, theirs.id].every((id) => everyone.some((e) => e.id === id)));
      // A customer cannot give an endpoint to someone else.
      const foreign = await as(alice.key)('POST', '/v2/webhook-endpoints', { url: receiver.url('/hooks/x'), events: ['*'], user_id: bob.id });
      assert.ok([403, 422].includes(foreign.status), foreign.text);
      // Its own order reaches it, signed with the secret it chose (verified by the official library).
      const id = await order(alice.key);
      await eventually(async () => received(mine.path).includes(id) || undefined, 'alice’s order at her endpoint', PATIENCE_MS);
      const [delivery] = receiver.to(mine.path);
      assert.equal((new Webhook(OWN_SECRET).verify(delivery!.body, delivery!.headers as Record<string, string>) as Json).data.object.id, id);
      const deliveries = await as(alice.key)('GET', '/v2/webhook-deliveries?limit=100');
      assert.equal(deliveries.status, 200, deliveries.text);
      assert.ok((deliveries.body.data as Json[]).every((d) => d.endpoint_id === mine.id));
    });

    it('refuses a malformed secret (422 naming secret, the value not echoed) and a key without webhook-endpoints:write (403)', async () => {
      const alice = await user();
      for (const secret of [
        'whsec_short',
        `whsec_${Buffer.alloc(16).toString('base64')}`,
        `whsec_${Buffer.alloc(65).toString('base64')}`,
        'no-prefix',
        `whsec_${Buffer.alloc(32).toString('base64url')}-`,
      ]) {
        const res = await as(alice.key)('POST', '/v2/webhook-endpoints', { url: receiver.url('/hooks/never'), events: ['*'], secret });
        assert.equal(res.status, 422, `${secret}: ${res.text}`);
        assert.equal(res.body.error.code, 'VALIDATION_ERROR');
        assert.ok(
          (res.body.error.details as Json[]).some((d) => d.field === 'secret'),
          res.text,
        );
        assert.ok(!res.text.includes(secret.slice(6)) || secret === 'no-prefix', 'the secret is not echoed');
      }
      const scoped = await admin('POST', '/v2/api-keys', { name: 'read only', user_id: alice.id, scopes: ['orders:read'] });
      const refused = await as(scoped.body.key as string)('POST', '/v2/webhook-endpoints', { url: receiver.url('/hooks/never'), events: ['*'] });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.error.code, 'INSUFFICIENT_SCOPE');
    });

    it('a customer’s endpoint receives only its own events: not another customer’s order, not admins’ products', async () => {
      const alice = await user();
      const bob = await user();
      const mine = await register(alice.key, ['*']);
      const hidden = await order(bob.key);
      const product = await admin('POST', '/v2/products', { name: 'Not for customers’ hooks', price: { amount: 1, currency: 'EUR' } });
      assert.equal(product.status, 201);
      const own = await order(alice.key);
      await eventually(async () => received(mine.path).includes(own) || undefined, 'alice’s own order', PATIENCE_MS);
      assert.ok(!received(mine.path).includes(hidden), 'bob’s order reached alice');
      assert.ok(!received(mine.path).includes(product.body.id as string), 'a product event reached a customer');
      const types = (await as(alice.key)('GET', `/v2/webhook-deliveries?endpoint_id=${mine.id}&limit=100`)).body.data as Json[];
      assert.deepEqual(
        types.map((d) => d.event_type),
        ['order.created'],
        'no delivery is even recorded for what alice may not see',
      );
    });

    it('an admin demoted to customer: its endpoint stops at once, and a retry owed from before is not sent', async () => {
      const boss = await user('admin');
      const bob = await user();
      // The first attempt of each delivery fails (500); its retry comes 1.5 s later.
      const hook = await register(boss.key, ['order.*'], (n) => (n === 0 ? 500 : 200));
      const before = await order(bob.key);
      await eventually(async () => receiver.to(hook.path).length >= 1 || undefined, 'the first (failed) attempt of bob’s order', PATIENCE_MS);
      assert.equal((await admin('PATCH', `/v2/users/${boss.id}`, { role: 'customer' })).status, 200);
      const afterDemotion = await order(bob.key);
      const own = await order(boss.key);
      await eventually(async () => received(hook.path).includes(own) || undefined, 'the demoted owner’s own order', PATIENCE_MS);
      assert.ok(!received(hook.path).includes(afterDemotion), 'an order written after the demotion was delivered');
      const retried = await eventually(
        async () => {
          const d = (await all(canon.url, `/v2/webhook-deliveries?endpoint_id=${hook.id}&limit=100`)).find((x) => x.event_type === 'order.created' && x.status !== 'pending');
          return d && (d.attempts as Json[]).length >= 2 ? d : undefined;
        },
        'the owed retry to be settled',
        PATIENCE_MS,
      );
      assert.equal(retried.status, 'failed', JSON.stringify(retried));
      assert.equal((retried.attempts as Json[])[1]!.status_code, null);
      assert.match(String((retried.attempts as Json[])[1]!.error), /may no longer see/);
      assert.equal(received(hook.path).filter((id) => id === before).length, 1, 'bob’s order went out once, before the demotion, never again');
    });
  });
}
