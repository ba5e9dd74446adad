// Issue 26.8 (DESIGN §9): `canon worker` stays up until SIGTERM on both stores, serves /healthz, /readyz and /metrics on --port, and stops promptly, finishing the attempts and payments under way and releasing the deliveries it had not attempted.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { compileModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { openStore } from '../../../src/runtime/open-store.js';
import type { Store } from '../../../src/store/types.js';
import { CertDir, type CertFiles } from '../../support/certs.js';
import { eventually } from '../../support/eventually.js';
import { ADMIN_KEY } from '../../support/harness.js';
import { startCanon, startCanonWorker, type CanonProcess, type WorkerProcess } from '../../support/processes.js';
import { REDIS_URL, runPrefix } from '../../support/redis.js';
import { all, call, pool, scratchStore, STORES, type Json, type Scratch } from './api.js';
import { Receiver } from './receiver.js';

/** An attempt's bound: a receiver that never answers holds an attempt this long. */
const TIMEOUT_MS = 1500;
/** Deliveries made in one dispatch when the worker starts: more than the 32 attempted at once by one batch. */
const EVENTS = 40;
/** How long the reference app's simulated payment provider takes (CANON_PAYMENT_DELAY_MS). */
const PAYMENT_MS = 2000;

for (const kind of STORES) {
  describe(`canon worker as a process (${kind})`, () => {
    let certs: CertDir;
    let ca: CertFiles;
    let receiver: Receiver;
    let scratch: Scratch;
    let api: CanonProcess;
    const workers: WorkerProcess[] = [];
    let env: Record<string, string>;
    let store: Store;

    before(async () => {
      certs = new CertDir();
      ca = certs.ca('ca', 'Canon Test Webhook CA');
      receiver = await Receiver.start(certs.leaf('receiver', 'localhost', 'server', ca));
      scratch = await scratchStore(kind);
      env = {
        DATABASE_URL: scratch.databaseUrl,
        CANON_ADMIN_API_KEY: ADMIN_KEY,
        CANON_SECRET: 'worker-process-secret',
        NODE_EXTRA_CA_CERTS: ca.certFile,
        CANON_WEBHOOK_ALLOW_PRIVATE: '1',
        // After a failed attempt, the next one is due half a second later: far sooner than a claim's 30 s lease.
        CANON_WEBHOOK_RETRY_SCHEDULE: '0,0.5,0.5,0.5',
        CANON_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        CANON_EVENT_POLL_MS: '100',
        CANON_PAYMENT_DELAY_MS: String(PAYMENT_MS),
        // Redis, when the suite has one, on PostgreSQL: /readyz then checks it too.
        ...(kind === 'postgres' && REDIS_URL ? { REDIS_URL, CANON_REDIS_PREFIX: runPrefix() } : {}),
      };
      api = await startCanon({ ...env, CANON_WORKER: 'off' });
      // The test's own look at the database, for what the API does not show: a payment's operation and its claim.
      store = (await openStore(scratch.databaseUrl, { poolSize: 1 })).store;
      await store.migrate(compileModel(withPlatform(commerce)));
    });
    after(async () => {
      await store?.close();
      for (const w of workers) await w.stop();
      await api?.stop();
      await receiver?.close();
      await scratch?.remove();
      certs?.remove();
    });

    const worker = async (args: string[] = []): Promise<WorkerProcess> => {
      const w = await startCanonWorker(env, args);
      workers.push(w);
      return w;
    };

    it('stays up while idle, answers /healthz, /readyz and /metrics on --port, and exits 0 promptly on SIGTERM', async () => {
      const w = await worker(['--port', '0']);
      assert.ok(w.url, w.output());
      // Every timer of the worker role is unref'd: before the fix the process ended by itself here, 0, after ~2 s.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      assert.equal(w.child.exitCode, null, `the worker exited by itself:\n${w.output()}`);

      const live = await fetch(`${w.url}/healthz`);
      assert.equal(live.status, 200);
      assert.deepEqual(await live.json(), { status: 'ok' });
      assert.equal(live.headers.get('cache-control'), 'no-store');
      assert.match(live.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);

      const ready = await fetch(`${w.url}/readyz`);
      assert.equal(ready.status, 200);
      const readiness = (await ready.json()) as Json;
      assert.equal(readiness.status, 'ready');
      assert.deepEqual(readiness.checks, { store: 'ok', ...(env.REDIS_URL ? { redis: 'ok' } : {}), worker: 'ok' });

      // An operator address: no credentials asked (docs/configuration.md).
      const metrics = await fetch(`${w.url}/metrics`);
      assert.equal(metrics.status, 200);
      assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
      const text = await metrics.text();
      assert.match(text, /^canon_webhook_queue_depth 0$/m);
      assert.match(text, /^# TYPE canon_webhook_deliveries_total counter$/m);

      const missing = await fetch(`${w.url}/v2/products`, { headers: { 'x-api-key': ADMIN_KEY } });
      assert.equal(missing.status, 404);
      const body = (await missing.json()) as Json;
      assert.equal(body.error.code, 'ROUTE_NOT_FOUND');
      assert.equal(body.error.request_id, missing.headers.get('x-request-id'));
      const post = await fetch(`${w.url}/readyz`, { method: 'POST' });
      assert.equal(post.status, 405);
      assert.equal(post.headers.get('allow'), 'GET, HEAD');
      assert.equal(((await post.json()) as Json).error.code, 'METHOD_NOT_ALLOWED');

      const exit = await w.stop();
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, w.output());
      assert.ok(exit.ms < 5000, `stopping an idle worker took ${exit.ms} ms`);
    });

    it('SIGTERM with a batch in hand: attempts under way finish and are recorded, the others are released, none is left to its lease; a payment under way finishes', async () => {
      // A payment accepted (202) while no worker runs: the worker claims it at start, and the provider takes 2 s.
      const user = await call(api.url, 'POST', '/v2/users', { email: `payer-${randomUUID()}@example.com`, full_name: 'Payer', password: 'long enough password' });
      assert.equal(user.status, 201, user.text);
      const product = await call(api.url, 'POST', '/v2/products', { name: 'paid for', price: { amount: 500, currency: 'EUR' } });
      const order = await call(api.url, 'POST', '/v2/orders', { user_id: user.body.id });
      assert.equal(order.status, 201, order.text);
      const item = await call(api.url, 'POST', `/v2/orders/${order.body.id}/order-items`, { product_id: product.body.id, quantity: 1 });
      assert.equal(item.status, 201, item.text);
      const payment = await call(api.url, 'POST', `/v2/orders/${order.body.id}/payment`);
      assert.equal(payment.status, 202, payment.text);

      const path = `/hooks/${randomUUID()}`;
      let hang = true;
      const created = await call(api.url, 'POST', '/v2/webhook-endpoints', { url: receiver.url(path), events: ['product.created'] });
      assert.equal(created.status, 201, created.text);
      receiver.route(path, { secrets: [created.body.secret as string], answer: () => (hang ? 'hang' : 200) });
      // Written with no worker running: the first one to start dispatches all of them at once, in one batch.
      await pool(
        Array.from({ length: EVENTS }, (_, i) => i),
        8,
        async (i) => {
          const res = await call(api.url, 'POST', '/v2/products', { name: `in hand ${i}`, price: { amount: i + 1, currency: 'EUR' } });
          assert.equal(res.status, 201, res.text);
        },
      );
      const w = await worker();
      await eventually(async () => receiver.to(path).length > 0, 'the first attempt reaching the receiver (which never answers it)', 20_000);
      // The payment's operation is claimed (its first attempt counted): it is under way when SIGTERM comes.
      await eventually(
        async () =>
          (await store.list('operations', { where: [{ path: 'object_id', op: 'eq', value: order.body.id }], orderBy: [{ path: 'id', desc: false }], limit: 1 })).rows[0]
            ?.attempts === 1,
        'the payment claimed',
      );
      const exit = await w.stop();
      const stoppedAt = Date.now();
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, w.output());
      assert.ok(exit.ms < Math.max(TIMEOUT_MS, PAYMENT_MS) + 5000, `stopping took ${exit.ms} ms: longer than the work under way`);
      // Finished, not left to its lease: the order is paid as the worker exits.
      const paid = await call(api.url, 'GET', `/v2/orders/${order.body.id}`);
      assert.equal(paid.body.status, 'paid', 'the payment under way at SIGTERM was completed before the exit');

      const deliveries = await all(api.url, `/v2/webhook-deliveries?endpoint_id=${created.body.id}&limit=100`);
      assert.equal(deliveries.length, EVENTS, 'one delivery per event written before the worker started');
      const attempted = deliveries.filter((d) => (d.attempts as Json[]).length > 0);
      const released = deliveries.filter((d) => (d.attempts as Json[]).length === 0);
      assert.ok(attempted.length > 0 && released.length > 0, `${attempted.length} attempted, ${released.length} released`);
      for (const d of attempted) assert.match(String((d.attempts as Json[])[0]!.error), /timeout/);
      // Neither kind waits for the 30 s lease: each is due again at once (released) or after its retry delay (finished).
      for (const d of deliveries) {
        assert.equal(d.status, 'pending');
        assert.ok(Date.parse(d.next_attempt_at as string) < stoppedAt + 5000, `${d.id} is due only at ${d.next_attempt_at as string}`);
      }

      hang = false;
      await worker();
      await eventually(
        async () => (await all(api.url, `/v2/webhook-deliveries?endpoint_id=${created.body.id}&limit=100`)).every((d) => d.status === 'succeeded'),
        'every delivery succeeded, sent by the next worker well within a lease',
        15_000,
        100,
      );
      assert.deepEqual(receiver.problems, []);
    });
  });
}
