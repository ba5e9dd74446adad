// Issue 15 (DESIGN §9) end to end: a real `canon serve` delivers to a real HTTPS receiver (trusted through NODE_EXTRA_CA_CERTS), every delivery verified by the official standardwebhooks library; retries, dead letters, 410, redirects, timeouts, rotation, metrics.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { eventViolations } from '../../support/conformance.js';
import { eventually } from '../../support/eventually.js';
import type { CanonProcess } from '../../support/processes.js';
import { all, call, STORES, type Json } from './api.js';
import type { Answer, Receiver } from './receiver.js';
import { startWebhookRig, type WebhookRig } from './rig.js';

/** Seconds before each attempt: three attempts, the retries 0.5 s and 1 s after a failure (±20 %). */
const SCHEDULE = [0, 0.5, 1];
const TIMEOUT_MS = 500;
/** How long a test waits for something the worker does (it polls every 100 ms). */
const PATIENCE_MS = 15_000;
/** The app `canon serve` runs (the reference commerce app), for the event catalog. */
const model = compileModel(withPlatform(commerce));

interface Endpoint {
  id: string;
  secret: string;
  path: string;
  created: Json;
}

for (const store of STORES) {
  describe(`webhooks end to end (${store})`, () => {
    let rig: WebhookRig;
    let receiver: Receiver;
    let canon: CanonProcess;
    const endpoints: string[] = [];

    before(async () => {
      rig = await startWebhookRig(store, 'webhooks-e2e-secret', {
        CANON_WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(','),
        CANON_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      });
      ({ receiver, canon } = rig);
    });
    after(async () => rig?.close());

    const api = (method: string, path: string, body?: unknown) => call(canon.url, method, path, body);

    /** Registers an endpoint on a fresh receiver path answering as `answer` says; it is disabled again after its test. */
    const endpoint = async (answer: (n: number) => Answer, events: string[] = ['product.*'], extra: Json = {}): Promise<Endpoint> => {
      const path = `/hooks/${randomUUID()}`;
      const res = await api('POST', '/v2/webhook-endpoints', { url: receiver.url(path), events, description: 'e2e receiver', ...extra });
      assert.equal(res.status, 201, res.text);
      assert.match(res.body.secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
      receiver.route(path, { secrets: [res.body.secret], answer });
      endpoints.push(res.body.id);
      return { id: res.body.id, secret: res.body.secret, path, created: res.body };
    };
    /** Disables an endpoint so that the events of later tests do not reach it. */
    const retire = async (ep: Endpoint): Promise<void> => {
      const res = await api('PATCH', `/v2/webhook-endpoints/${ep.id}`, { status: 'disabled' });
      assert.equal(res.status, 200, res.text);
    };
    const product = async (name = `product-${randomUUID()}`): Promise<Json> => {
      const res = await api('POST', '/v2/products', { name, price: { amount: 1250, currency: 'EUR' } });
      assert.equal(res.status, 201, res.text);
      return res.body;
    };
    /** The event that created `objectId`. */
    const eventOf = (type: string, objectId: string): Promise<Json> =>
      eventually(async () => (await all(canon.url, `/events?limit=100&type=${type}`)).find((e) => e.data.object.id === objectId), `the ${type} event of ${objectId}`);
    const deliveriesOf = (ep: Endpoint): Promise<Json[]> => all(canon.url, `/v2/webhook-deliveries?endpoint_id=${ep.id}&limit=100`);
    /** The endpoint's one delivery once `done` holds for it. */
    const delivery = (ep: Endpoint, done: (d: Json) => boolean, what: string): Promise<Json> =>
      eventually(
        async () => {
          const list = await deliveriesOf(ep);
          assert.ok(list.length <= 1, `one delivery expected, got ${list.length}`);
          return list[0] && done(list[0]) ? list[0] : undefined;
        },
        what,
        PATIENCE_MS,
        50,
      );
    const codes = (d: Json): Array<number | null> => (d.attempts as Json[]).map((a) => a.status_code as number | null);

    it('creates an endpoint (201, the secret shown once) and refuses http:// and credentials even with private targets allowed', async () => {
      const ep = await endpoint(() => 200);
      try {
        const c = ep.created;
        assert.equal(c.url, receiver.url(ep.path));
        assert.deepEqual(c.events, ['product.*']);
        assert.equal(c.description, 'e2e receiver');
        assert.equal(c.status, 'enabled');
        assert.equal(c.api_version, '2026-03-01');
        assert.equal('signing_secrets' in c, false);
        assert.equal('failing_since' in c, false);
        const read = await api('GET', `/v2/webhook-endpoints/${ep.id}`);
        assert.equal(read.status, 200);
        assert.equal('secret' in read.body, false, 'the secret is shown in the 201 only');
        assert.equal('signing_secrets' in read.body, false);
        for (const url of [`http://127.0.0.1:1/hook`, `https://user:pass@127.0.0.1/hook`]) {
          const res = await api('POST', '/v2/webhook-endpoints', { url, events: ['*'] });
          assert.equal(res.status, 422, url);
          assert.equal(res.body.error.code, 'VALIDATION_ERROR');
          assert.ok(
            (res.body.error.details as Json[]).some((d) => d.field === 'url'),
            res.text,
          );
        }
      } finally {
        await retire(ep);
      }
    });

    it('an endpoint pinned to v1 receives the v1 payload, api_version naming it; a current endpoint receives the same event in v2', async () => {
      const pinned = await endpoint(() => 200, ['product.created'], { api_version: '2025-01-15' });
      const current = await endpoint(() => 200, ['product.created']);
      try {
        assert.equal(pinned.created.api_version, '2025-01-15');
        const made = await product('Pinned widget');
        await delivery(pinned, (d) => d.status === 'succeeded', 'the v1 delivery to succeed');
        await delivery(current, (d) => d.status === 'succeeded', 'the v2 delivery to succeed');
        const [v1] = receiver.to(pinned.path);
        const [v2] = receiver.to(current.path);
        const old = new Webhook(pinned.secret).verify(v1!.body, v1!.headers as Record<string, string>) as Json;
        const now = new Webhook(current.secret).verify(v2!.body, v2!.headers as Record<string, string>) as Json;
        assert.equal(old.id, now.id, 'one event, rendered twice');
        assert.equal(old.api_version, '2025-01-15');
        assert.equal(now.api_version, '2026-03-01');
        assert.equal(old.data.object.id, made.id);
        assert.equal(old.data.object.price_cents, 1250);
        assert.equal(old.data.object.currency, 'EUR');
        assert.equal('price' in old.data.object, false);
        assert.deepEqual(now.data.object.price, { amount: 1250, currency: 'EUR' });
        assert.equal('price_cents' in now.data.object, false);
        // An api_version the server does not serve is refused when the endpoint is made.
        const bad = await api('POST', '/v2/webhook-endpoints', { url: receiver.url('/hooks/never'), events: ['*'], api_version: '2020-01-01' });
        assert.equal(bad.status, 422, bad.text);
        assert.equal(bad.body.error.details[0].field, 'api_version');
      } finally {
        await retire(pinned);
        await retire(current);
      }
    });

    it('sends one signed POST per matching event: webhook-id is the event id, the body the event; order.* events do not reach product.*', async () => {
      const ep = await endpoint(() => 200, ['product.*']);
      const orders = await endpoint(() => 200, ['order.*']);
      try {
        // A customer's order first, then a product: the dispatcher takes events in order, so once the product's
        // delivery is in, the order event has been dispatched too.
        const user = await api('POST', '/v2/users', { email: `hooks-${randomUUID()}@example.com`, full_name: 'Hook Customer', password: 'long enough password' });
        assert.equal(user.status, 201, user.text);
        const key = await api('POST', '/v2/api-keys', { name: 'customer key', user_id: user.body.id });
        assert.equal(key.status, 201, key.text);
        const order = await call(canon.url, 'POST', '/v2/orders', {}, key.body.key as string);
        assert.equal(order.status, 201, order.text);
        const made = await product('Signed widget');
        const event = await eventOf('product.created', made.id as string);

        const done = await delivery(ep, (d) => d.status === 'succeeded', 'the product delivery to succeed');
        await eventually(async () => receiver.to(orders.path).length >= 1, 'the order.* endpoint to get the order event', PATIENCE_MS);

        const got = receiver.to(ep.path);
        assert.equal(got.length, 1);
        const [req] = got;
        assert.equal(req!.method, 'POST');
        assert.equal(req!.headers['content-type'], 'application/json');
        assert.equal(req!.id, event.id);
        assert.ok(Math.abs(Number(req!.headers['webhook-timestamp']) - Date.now() / 1000) < 60, String(req!.headers['webhook-timestamp']));
        assert.match(String(req!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+={0,2}$/);
        const verified = new Webhook(ep.secret).verify(req!.body, req!.headers as Record<string, string>) as Json;
        assert.deepEqual(verified, JSON.parse(req!.body));
        assert.equal(verified.id, event.id);
        assert.equal(verified.type, 'product.created');
        assert.equal(verified.api_version, '2026-03-01');
        assert.equal(verified.sequence, event.sequence);
        assert.equal(verified.data.object.id, made.id);
        assert.equal(verified.data.object.name, 'Signed widget');
        assert.deepEqual(verified.data.object.price, { amount: 1250, currency: 'EUR' });
        // Another endpoint's secret does not verify it.
        assert.throws(() => new Webhook(orders.secret).verify(req!.body, req!.headers as Record<string, string>));

        const one = await api('GET', `/v2/webhook-deliveries/${done.id}`);
        assert.equal(one.status, 200);
        const d = one.body;
        assert.equal(d.endpoint_id, ep.id);
        assert.equal(d.event_id, event.id);
        assert.equal(d.event_type, 'product.created');
        assert.equal(d.status, 'succeeded');
        assert.equal(d.next_attempt_at, null);
        assert.equal('claim' in d, false);
        assert.equal(d.attempts.length, 1);
        const [attempt] = d.attempts as Json[];
        assert.deepEqual(Object.keys(attempt!).sort(), ['at', 'duration_ms', 'error', 'status_code']);
        assert.equal(attempt!.status_code, 200);
        assert.equal(attempt!.error, null);
        assert.ok(Number.isInteger(attempt!.duration_ms) && attempt!.duration_ms >= 0 && attempt!.duration_ms < 5000, String(attempt!.duration_ms));
        assert.ok(Date.parse(attempt!.at as string) >= Date.parse(d.created_at as string), `${attempt!.at} after ${d.created_at}`);

        // The order event went to the order.* endpoint only.
        const toOrders = receiver.to(orders.path);
        assert.ok(toOrders.some((r) => (JSON.parse(r.body) as Json).type === 'order.created' && (JSON.parse(r.body) as Json).data.object.id === order.body.id));
        assert.ok(toOrders.every((r) => (JSON.parse(r.body) as Json).type.startsWith('order.')));
        assert.deepEqual(
          receiver.to(ep.path).map((r) => (JSON.parse(r.body) as Json).type),
          ['product.created'],
        );
        assert.deepEqual(
          (await deliveriesOf(ep)).map((x) => x.event_type),
          ['product.created'],
        );
      } finally {
        await retire(ep);
        await retire(orders);
      }
    });

    it('retries after 500, 500 and succeeds on the third attempt, the gaps following the schedule (±20 %)', async () => {
      const ep = await endpoint((n) => (n < 2 ? 500 : 200));
      try {
        const made = await product();
        const d = await delivery(ep, (x) => x.status === 'succeeded', 'the delivery to succeed on its third attempt');
        assert.deepEqual(codes(d), [500, 500, 200]);
        assert.deepEqual(
          (d.attempts as Json[]).map((a) => a.error),
          ['HTTP 500', 'HTTP 500', null],
        );
        const got = receiver.to(ep.path);
        assert.equal(got.length, 3);
        const event = await eventOf('product.created', made.id as string);
        assert.deepEqual(
          got.map((r) => r.id),
          [event.id, event.id, event.id],
        );
        // Gaps seen by the receiver: at least the jittered delay (the next attempt is scheduled after the answer),
        // at most the delay + 20 % plus the worker's poll and a generous allowance for a loaded machine (loose).
        for (const [i, delay] of [
          [1, SCHEDULE[1]!],
          [2, SCHEDULE[2]!],
        ] as const) {
          const gap = got[i]!.at - got[i - 1]!.at;
          assert.ok(gap >= delay * 1000 * 0.8 - 15, `gap ${i}: ${gap} ms for a ${delay} s delay`);
          assert.ok(gap <= delay * 1000 * 1.2 + 3000, `gap ${i}: ${gap} ms for a ${delay} s delay`);
        }
        // The recorded attempt times agree.
        const at = (d.attempts as Json[]).map((a) => Date.parse(a.at as string));
        assert.ok(at[1]! - at[0]! >= SCHEDULE[1]! * 1000 * 0.8 - 15, JSON.stringify(d.attempts));
        assert.ok(at[2]! - at[1]! >= SCHEDULE[2]! * 1000 * 0.8 - 15, JSON.stringify(d.attempts));
      } finally {
        await retire(ep);
      }
    });

    it('fails after the schedule (dead letter, ?status=failed), retry answers 202 and succeeds with the earlier attempts kept; retrying again is 409', async () => {
      const ep = await endpoint(() => 500);
      try {
        await product();
        const failed = await delivery(ep, (x) => x.status === 'failed', 'the delivery to fail after three attempts');
        assert.deepEqual(codes(failed), [500, 500, 500]);
        assert.equal(failed.next_attempt_at, null);
        assert.equal(receiver.to(ep.path).length, 3);

        const dead = await all(canon.url, '/v2/webhook-deliveries?status=failed&limit=100');
        assert.ok(
          dead.some((x) => x.id === failed.id),
          'listed among the failed deliveries',
        );
        assert.ok(dead.every((x) => x.status === 'failed'));
        const pendingOnly = await all(canon.url, '/v2/webhook-deliveries?status=pending&limit=100');
        assert.equal(
          pendingOnly.some((x) => x.id === failed.id),
          false,
        );

        receiver.answer(ep.path, () => 200);
        const retry = await api('POST', `/v2/webhook-deliveries/${failed.id}/retry`);
        assert.equal(retry.status, 202, retry.text);
        assert.equal(retry.body.id, failed.id);
        assert.equal(retry.body.status, 'pending');
        assert.deepEqual(codes(retry.body), [500, 500, 500], 'the earlier attempts are kept');
        const done = await delivery(ep, (x) => x.status === 'succeeded', 'the retried delivery to succeed');
        assert.deepEqual(codes(done), [500, 500, 500, 200]);
        assert.equal(receiver.to(ep.path).length, 4);
        assert.equal(new Set(receiver.to(ep.path).map((r) => r.id)).size, 1, 'the same event, the same webhook-id');
        const listed = await all(canon.url, '/v2/webhook-deliveries?status=failed&limit=100');
        assert.equal(
          listed.some((x) => x.id === failed.id),
          false,
        );

        const again = await api('POST', `/v2/webhook-deliveries/${failed.id}/retry`);
        assert.equal(again.status, 409, again.text);
        assert.equal(again.body.error.code, 'INVALID_STATE');
        const missing = await api('POST', `/v2/webhook-deliveries/${randomUUID()}/retry`);
        assert.equal(missing.status, 404, missing.text);
        assert.equal(missing.body.error.code, 'NOT_FOUND');
      } finally {
        await retire(ep);
      }
    });

    it('a 410 disables the endpoint with a reason; PATCH {status: "enabled"} enables it again', async () => {
      const ep = await endpoint(() => 410);
      try {
        await product();
        const gone = await delivery(ep, (x) => x.status === 'failed', 'the delivery answered 410 to fail');
        assert.deepEqual(codes(gone), [410], 'a 410 is not retried');
        const disabled = await eventually(
          async () => {
            const res = await api('GET', `/v2/webhook-endpoints/${ep.id}`);
            return res.body.status === 'disabled' ? res.body : undefined;
          },
          'the endpoint to be disabled',
          PATIENCE_MS,
        );
        assert.equal(typeof disabled.disabled_reason, 'string');
        assert.match(disabled.disabled_reason as string, /410/);
        assert.equal(receiver.to(ep.path).length, 1);

        const enabled = await api('PATCH', `/v2/webhook-endpoints/${ep.id}`, { status: 'enabled' });
        assert.equal(enabled.status, 200, enabled.text);
        assert.equal(enabled.body.status, 'enabled');
        assert.equal(enabled.body.disabled_reason ?? null, null);
        // Enabled again, it receives new events.
        receiver.answer(ep.path, () => 200);
        const made = await product();
        await eventually(async () => (await deliveriesOf(ep)).find((x) => x.status === 'succeeded'), 'a delivery to the re-enabled endpoint', PATIENCE_MS);
        const last = receiver.to(ep.path).at(-1)!;
        assert.equal((JSON.parse(last.body) as Json).data.object.id, made.id);
      } finally {
        await retire(ep);
      }
    });

    it('never follows a redirect: a 302 is a failed attempt and the Location is never requested', async () => {
      const path = `/hooks/${randomUUID()}`;
      const ep = await endpoint(() => ({ status: 302, headers: { location: receiver.url(`${path}-moved`) } }));
      receiver.route(`${path}-moved`, { secrets: [ep.secret], answer: () => 200 });
      try {
        await product();
        const failed = await delivery(ep, (x) => x.status === 'failed', 'the redirected delivery to fail');
        assert.deepEqual(codes(failed), [302, 302, 302]);
        for (const a of failed.attempts as Json[]) assert.match(a.error as string, /redirect/i);
        assert.equal(receiver.to(ep.path).length, 3);
        assert.equal(receiver.to(`${path}-moved`).length, 0);
        assert.equal(receiver.requests.filter((r) => r.path.startsWith(ep.path) && r.path !== ep.path).length, 0);
      } finally {
        await retire(ep);
      }
    });

    it(`gives up on a receiver that never answers after CANON_WEBHOOK_TIMEOUT_MS (${TIMEOUT_MS} ms)`, async () => {
      const ep = await endpoint(() => 'hang');
      try {
        await product();
        const d = await delivery(ep, (x) => (x.attempts as Json[]).length >= 1, 'the first attempt to time out');
        const [attempt] = d.attempts as Json[];
        assert.equal(attempt!.status_code, null);
        assert.match(attempt!.error as string, /timeout/i);
        assert.ok(attempt!.duration_ms >= TIMEOUT_MS * 0.9 && attempt!.duration_ms < TIMEOUT_MS + 3000, String(attempt!.duration_ms));
        assert.equal(d.status, 'pending', 'a timeout is retried');
      } finally {
        await retire(ep);
      }
    });

    it('rotate-secret returns a new secret; later deliveries carry two signatures, each verifying alone with its own secret', async () => {
      const ep = await endpoint(() => 200);
      try {
        const rotated = await api('POST', `/v2/webhook-endpoints/${ep.id}/rotate-secret`);
        assert.equal(rotated.status, 200, rotated.text);
        assert.equal(rotated.body.id, ep.id);
        assert.equal('signing_secrets' in rotated.body, false);
        // Without the new secret in the response (DESIGN §9: "returns a new secret") the receiver cannot switch;
        // what can still be checked is checked first, then the test fails on it.
        const fresh = typeof rotated.body.secret === 'string' ? (rotated.body.secret as string) : undefined;
        if (fresh) {
          assert.match(fresh, /^whsec_/);
          assert.notEqual(fresh, ep.secret);
          receiver.secrets(ep.path, [fresh, ep.secret]);
        }
        assert.equal('secret' in (await api('GET', `/v2/webhook-endpoints/${ep.id}`)).body, false);

        await product();
        await delivery(ep, (x) => x.status === 'succeeded', 'a delivery after the rotation');
        const [req] = receiver.to(ep.path);
        const signatures = String(req!.headers['webhook-signature']).split(' ');
        assert.equal(signatures.length, 2, String(req!.headers['webhook-signature']));
        const alone = (signature: string): Record<string, string> => ({ ...(req!.headers as Record<string, string>), 'webhook-signature': signature });
        const verifies = (secret: string, signature: string): boolean => {
          try {
            new Webhook(secret).verify(req!.body, alone(signature));
            return true;
          } catch {
            return false;
          }
        };
        const byOld = signatures.filter((s) => verifies(ep.secret, s));
        assert.equal(byOld.length, 1, 'exactly one signature is the old secret’s');
        assert.ok(fresh, `the rotate-secret response lacks the new secret (DESIGN §9: it returns a new secret): ${rotated.text}`);
        assert.equal(rotated.headers.get('cache-control'), 'no-store', 'a response revealing a secret is never cached');
        const byNew = signatures.filter((s) => verifies(fresh, s));
        assert.equal(byNew.length, 1, 'exactly one signature is the new secret’s');
        assert.notEqual(byNew[0], byOld[0]);
        assert.deepEqual(req!.verifiedWith.sort(), [fresh, ep.secret].sort());
      } finally {
        await retire(ep);
      }
    });

    it('/metrics counts deliveries by result and shows the queue depth', async () => {
      const res = await call(canon.url, 'GET', '/metrics');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      const value = (pattern: RegExp): number => {
        const m = pattern.exec(res.text);
        assert.ok(m, `${pattern} in\n${res.text}`);
        return Number(m[1]);
      };
      assert.ok(value(/^canon_webhook_deliveries_total\{result="succeeded"\} (\d+)$/m) > 0);
      assert.ok(value(/^canon_webhook_deliveries_total\{result="retrying"\} (\d+)$/m) > 0);
      assert.ok(value(/^canon_webhook_deliveries_total\{result="failed"\} (\d+)$/m) > 0);
      assert.match(res.text, /^# TYPE canon_webhook_queue_depth gauge$/m);
      assert.ok(value(/^canon_webhook_queue_depth (\d+)$/m) >= 0);
      assert.ok(value(/^canon_webhook_delivery_duration_seconds_count (\d+)$/m) > 0);
    });

    it('every delivery the receiver got verified with its endpoint’s secret', () => {
      assert.ok(receiver.requests.length > 0);
      assert.deepEqual(receiver.problems, []);
    });

    it('every delivery the receiver got is an event the catalog lists, in its schema for the version it names (issue 27.2)', () => {
      const bodies = receiver.requests.map((r) => JSON.parse(r.body) as unknown);
      assert.ok(bodies.length > 10, `${bodies.length} deliveries`);
      assert.deepEqual(eventViolations(model, bodies, { all: true, thin: true }), []);
    });
  });
}
