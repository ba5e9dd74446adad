// Issue 26.3 (DESIGN §9): an API with CANON_WORKER=off, an endpoint created, writes, and only then a worker started: the endpoint is owed every event from its creation on.
/* eslint-disable @typescript-eslint/no-explicit-any */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import type { Config } from '../../../src/config/config.js';
import { createWorker } from '../../../src/runtime/compose.js';
import { eventually } from '../../support/eventually.js';
import { createProduct, startServer, type TestServer } from '../../support/harness.js';
import { PG_URL } from '../../support/pg.js';

/**
 * One attempt per delivery, to a loopback port nothing listens on: each delivery is made, attempted once and
 * failed, so the deliveries list says exactly which events the endpoint was owed, with no retries under way.
 */
const SETTINGS: Partial<Config> = { worker: 'off', webhookAllowPrivate: true, webhookRetrySchedule: '0', webhookTimeoutMs: 2000, eventPollMs: 100 };
const NOWHERE = 'https://127.0.0.1:9/late-worker';

for (const mode of ['inject', ...(PG_URL ? (['inject/postgres'] as const) : [])] as const) {
  describe(`a worker that first runs after the writes (${mode})`, () => {
    const cleanup: Array<() => Promise<void>> = [];
    let server: TestServer;
    /** The API alone (CANON_WORKER=off) on a store a second process could share: a SQLite file, or a PostgreSQL database. */
    before(async () => {
      let overrides: Partial<Config> = SETTINGS;
      if (!mode.endsWith('postgres')) {
        const dir = mkdtempSync(join(tmpdir(), 'canon-late-worker-'));
        cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
        overrides = { ...SETTINGS, databaseUrl: `sqlite:${join(dir, 'canon.db')}`, sqliteSynchronous: 'normal' };
      }
      server = await startServer(mode, overrides);
      cleanup.push(() => server.close());
    });
    after(async () => {
      for (const fn of cleanup.reverse()) await fn();
    });
    /** A worker started now, in a core of its own (as `canon worker` would be); each test stops its own. */
    const startWorker = () => createWorker(server.runtime.config, { logger: false, appDef: commerce });
    const deliveriesOf = async (endpointId: string): Promise<any[]> => {
      const res = await server.request('GET', `/v2/webhook-deliveries?endpoint_id=${endpointId}&limit=100`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.pagination.has_more, false);
      return res.body.data;
    };
    const productEvents = async (): Promise<string[]> => {
      const res = await server.request('GET', '/events?type=product.created&limit=100');
      assert.equal(res.status, 200, res.text);
      return res.body.data.map((e: any) => e.id);
    };

    it('delivers the 10 events written before the worker first ran, then the 5 after: 15 events, 15 deliveries', async () => {
      const created = await server.request('POST', '/v2/webhook-endpoints', { body: { url: NOWHERE, events: ['product.created'] } });
      assert.equal(created.status, 201, created.text);
      const endpointId = created.body.id as string;
      for (let i = 0; i < 10; i++) await createProduct(server, { name: `before the worker ${i}` });
      // No worker runs: nothing is delivered, nothing dispatched.
      assert.deepEqual(await deliveriesOf(endpointId), []);

      const worker = await startWorker();
      try {
        for (let i = 0; i < 5; i++) await createProduct(server, { name: `after the worker ${i}` });
        const events = await eventually(async () => {
          const ids = await productEvents();
          return ids.length === 15 ? ids : undefined;
        }, 'the 15 product.created events');
        const deliveries = await eventually(
          async () => {
            const list = await deliveriesOf(endpointId);
            return list.length >= 15 && list.every((d) => d.status === 'failed') ? list : undefined;
          },
          'a finished delivery for each of the 15 events',
          20_000,
          50,
        );
        assert.deepEqual(deliveries.map((d) => d.event_id).sort(), [...events].sort(), 'each event delivered once, none missing');
        assert.ok(deliveries.every((d) => d.attempts.length === 1 && d.event_type === 'product.created'));
      } finally {
        await worker.close();
      }
    });

    it('workers stopped, then an endpoint created among writes: the next worker sends it only what was written after its creation', async () => {
      for (let i = 0; i < 3; i++) await createProduct(server, { name: `before the endpoint ${i}` });
      const created = await server.request('POST', '/v2/webhook-endpoints', { body: { url: NOWHERE, events: ['product.created'] } });
      assert.equal(created.status, 201, created.text);
      const mine = await createProduct(server, { name: 'after the endpoint' });
      const worker = await startWorker();
      try {
        const deliveries = await eventually(
          async () => {
            const list = await deliveriesOf(created.body.id);
            return list.length > 0 && list.every((d) => d.status === 'failed') ? list : undefined;
          },
          'the delivery of the product written after the endpoint',
          20_000,
          50,
        );
        const [event] = (await server.request('GET', '/events?type=product.created&limit=100')).body.data.filter((e: any) => e.data.object.id === mine.id);
        assert.deepEqual(
          deliveries.map((d) => d.event_id),
          [event.id],
        );
      } finally {
        await worker.close();
      }
    });
  });
}
