// Issue 26.3: per-endpoint dispatch positions on both stores: endpoints behind the others catch up and merge, disabled ones are owed nothing, several workers on one database dispatch each event to each endpoint once, and the purge keeps what is still owed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { WebhookWorker, type WebhookWorkerOptions } from '../../../src/webhooks/worker.js';
import { compileModel, type CompiledModel } from '../../../src/model/compile.js';
import { withPlatform } from '../../../src/runtime/compose.js';
import { purgeExpiredEvents } from '../../../src/runtime/event-purge.js';
import { openStore } from '../../../src/runtime/open-store.js';
import type { Store, Tx } from '../../../src/store/types.js';
import type { SendInput, SendOutcome } from '../../../src/webhooks/sender.js';
import { eventually } from '../../support/eventually.js';
import { createTestDatabase, PG_URL } from '../../support/pg.js';

const OK: SendOutcome = { ok: true, statusCode: 200, durationMs: 1, error: null, gone: false };
const DOWN: SendOutcome = { ok: false, statusCode: 503, durationMs: 1, error: 'HTTP 503', gone: false };
const OPTIONS: WebhookWorkerOptions = {
  schedule: [0, 3600],
  leaseMs: 30_000,
  batch: 4,
  concurrency: 4,
  pollMs: 20,
  maxPayloadBytes: 64 * 1024,
  failureWindowMs: 5 * 86_400_000,
  random: () => 0.5,
};
const silent = { warn: () => undefined, info: () => undefined, error: () => undefined } as never;

/** Records every send by endpoint URL; answers as `answer` says. */
class Sender {
  readonly sent: SendInput[] = [];
  answer: (input: SendInput) => SendOutcome = () => OK;
  async send(input: SendInput): Promise<SendOutcome> {
    this.sent.push(input);
    return this.answer(input);
  }
}

for (const kind of ['sqlite', ...(PG_URL ? (['postgres'] as const) : [])] as const) {
  describe(`webhook dispatch positions (${kind})`, () => {
    let url: string;
    let drop: () => Promise<void>;
    let model: CompiledModel;
    const stores: Store[] = [];
    const workers: WebhookWorker[] = [];

    before(async () => {
      if (kind === 'postgres') {
        const db = await createTestDatabase();
        url = db.url;
        drop = db.drop;
      } else {
        const dir = mkdtempSync(join(tmpdir(), 'canon-dispatch-'));
        url = `sqlite:${join(dir, 'canon.db')}`;
        drop = async () => rmSync(dir, { recursive: true, force: true });
      }
      model = compileModel(withPlatform(commerce));
    });
    // A worker left running by a failed test would take the next test's work.
    afterEach(async () => {
      for (const w of workers) await w.stop();
    });
    after(async () => {
      for (const s of stores) await s.close();
      await drop();
    });

    /** A store of its own: on one database, as another process's would be. */
    const open = async (): Promise<Store> => {
      const { store } = await openStore(url, { sqliteSynchronous: 'normal', poolSize: 4 });
      await store.migrate(model);
      stores.push(store);
      return store;
    };
    const worker = (store: Store, sender: Sender, options: Partial<WebhookWorkerOptions> = {}): WebhookWorker => {
      const w = new WebhookWorker(
        store,
        model,
        sender,
        (s) => s,
        () => new Date(),
        { ...OPTIONS, ...options },
        silent,
      );
      workers.push(w);
      return w;
    };
    /** An endpoint as the resource makes it: owed the events after the head read just before its creation. */
    const endpoint = async (store: Store, types: string[], eventsAfter?: number): Promise<string> => {
      const id = uuidv7();
      const at = new Date().toISOString();
      const head = eventsAfter ?? (await store.lastEventSequence());
      await store.transaction((tx) =>
        tx.insert('webhook-endpoints', {
          id,
          version: 1,
          created_at: at,
          updated_at: at,
          url: `https://receiver.example/${id}`,
          events: types,
          description: null,
          api_version: '2026-03-01',
          status: 'enabled',
          disabled_reason: null,
          signing_secrets: JSON.stringify([{ sealed: 'whsec_x', until: null }]),
          failing_since: null,
          events_after: head,
        }),
      );
      return id;
    };
    const setStatus = async (store: Store, id: string, status: 'enabled' | 'disabled'): Promise<void> => {
      await store.transaction(async (tx) => {
        const row = (await tx.lock('webhook-endpoints', id, 'update'))!;
        await tx.update('webhook-endpoints', { ...row, version: row.version + 1, status });
      });
    };
    const write = async (store: Store, type: string, createdAt = new Date().toISOString()): Promise<string> => {
      const id = uuidv7();
      await store.transaction((tx) =>
        tx.appendEvent({ id, type, resource: 'products', object_id: uuidv7(), owner_id: null, api_version: '2026-03-01', created_at: createdAt, data: { object: { id } } }),
      );
      // Numbered before returning (PostgreSQL numbers after the commit, in the background): findEvent sees it from here on.
      await store.sequenceEvents();
      return id;
    };
    /** The event ids sent to an endpoint, in the order sent. */
    const sentTo = (sender: Sender, endpointId: string): string[] => sender.sent.filter((s) => s.url.endsWith(endpointId)).map((s) => s.id);
    const deliveriesTo = async (store: Store, endpointId: string) =>
      (await store.list('webhook-deliveries', { where: [{ path: 'endpoint_id', op: 'eq', value: endpointId }], orderBy: [{ path: 'id', desc: false }], limit: 1000 })).rows;

    it('an endpoint created while others had moved past its creation catches up, then joins them: each event once', async () => {
      const store = await open();
      const sender = new Sender();
      const w = worker(store, sender);
      const early = await endpoint(store, ['race.*']);
      // The head as a creation racing a dispatch read it: the dispatch then moves every endpoint past it before the
      // new endpoint's row is visible.
      const head = await store.lastEventSequence();
      const missed = [];
      for (let i = 0; i < 10; i++) missed.push(await write(store, 'race.created'));
      w.start();
      await eventually(async () => sentTo(sender, early).length === 10, 'the early endpoint served');
      const late = await endpoint(store, ['race.*'], head);
      const after = [];
      for (let i = 0; i < 6; i++) after.push(await write(store, 'race.updated'));
      w.wake();
      await eventually(async () => sentTo(sender, late).length === 16 && sentTo(sender, early).length === 16, 'both endpoints served');
      assert.deepEqual(sentTo(sender, late).sort(), [...missed, ...after].sort());
      assert.deepEqual(sentTo(sender, early).sort(), [...missed, ...after].sort());
      // Merged: one position for both again.
      const rows = await store.getMany('webhook-dispatch', [early, late]);
      assert.equal(rows.length, 2);
      assert.equal(rows[0]!.position, rows[1]!.position);
      await w.stop();
    });

    it('an idle dispatch takes no lock and runs no transaction; an event, a new endpoint or a disabled one makes the next dispatch lock', async (t) => {
      const store = await open();
      const w = worker(store, new Sender());
      const ep = await endpoint(store, ['idle.*']);
      await write(store, 'idle.created');
      // Counted from here on: every dispatching transaction locks the frontier row first.
      let transactions = 0;
      const transaction = store.transaction.bind(store);
      store.transaction = <T>(fn: (tx: Tx) => Promise<T>): Promise<T> => {
        transactions++;
        return transaction(fn);
      };
      t.after(() => {
        store.transaction = transaction;
      });
      /** A dispatch's events taken and the transactions it ran; its deliveries are then attempted (the receiver answers 200), so none is left pending for the tests after. */
      const dispatch = async (): Promise<[number, number]> => {
        const before = transactions;
        const { taken, batch } = await w.dispatch();
        const ran = transactions - before;
        await w.deliver(batch);
        return [taken, ran];
      };
      assert.deepEqual(await dispatch(), [1, 1], 'the event: dispatched in one transaction');
      assert.deepEqual(await dispatch(), [0, 0], 'nothing new: no transaction');
      // Nor does a claim of due deliveries when none is due (the one above was delivered).
      let before = transactions;
      assert.equal(await w.deliverDue(), 0);
      assert.equal(transactions - before, 0, 'no delivery due: no transaction');
      assert.deepEqual(await dispatch(), [0, 0], 'still nothing');
      await write(store, 'idle.updated');
      assert.deepEqual(await dispatch(), [1, 1], 'a new event');
      assert.deepEqual(await dispatch(), [0, 0]);
      // A new endpoint's row, and a disabled endpoint's pause, are written by the next dispatch, with no event.
      await endpoint(store, ['idle.*']);
      assert.deepEqual(await dispatch(), [0, 1], 'the new endpoint’s position row');
      assert.deepEqual(await dispatch(), [0, 0]);
      await setStatus(store, ep, 'disabled');
      assert.deepEqual(await dispatch(), [0, 1], 'the disabled endpoint paused');
      assert.equal((await store.get('webhook-dispatch', ep))?.position, null);
      assert.deepEqual(await dispatch(), [0, 0]);
      // A delivery due again (a retry's time come): the claim locks it, in one transaction, and then none is due.
      const [pending] = (await store.list('webhook-deliveries', { where: [], orderBy: [{ path: 'id', desc: false }], limit: 1 })).rows;
      await store.transaction((tx) =>
        tx.update('webhook-deliveries', { ...pending!, version: pending!.version + 1, status: 'pending', next_attempt_at: new Date(Date.now() - 1000).toISOString() }),
      );
      before = transactions;
      assert.equal(await w.deliverDue(), 1);
      assert.ok(transactions - before >= 1, 'a due delivery: claimed in a transaction');
      before = transactions;
      assert.equal(await w.deliverDue(), 0);
      assert.equal(transactions - before, 0);
      // The frontier row made by the first dispatch of a deployment is what an idle check needs: none, and it locks.
      await store.transaction((tx) => tx.delete('webhook-dispatch', '00000000-0000-7000-8000-000000000001'));
      assert.deepEqual((await dispatch())[1], 1, 'no frontier row: the dispatch makes it');
      assert.deepEqual(await dispatch(), [0, 0]);
    });

    it('a disabled endpoint is owed nothing; enabled again, it receives every event written after that', async () => {
      const store = await open();
      const sender = new Sender();
      const w = worker(store, sender);
      const ep = await endpoint(store, ['pause.*']);
      const first = await write(store, 'pause.created');
      w.start();
      await eventually(async () => sentTo(sender, ep).length === 1, 'the first event');
      await setStatus(store, ep, 'disabled');
      const whileDisabled = await write(store, 'pause.updated');
      w.wake();
      // The dispatcher has seen it disabled once the frontier passed the event written meanwhile.
      const { sequence: seq } = await eventually(async () => (await store.findEvent(whileDisabled)) ?? undefined, 'the event numbered');
      await eventually(async () => Number((await store.get('webhook-dispatch', '00000000-0000-7000-8000-000000000001'))?.position) >= seq, 'a dispatch past it');
      await eventually(async () => (await store.get('webhook-dispatch', ep))?.position === null, 'the endpoint paused');
      await w.stop();
      // Enabled again and written to while no worker runs: still owed, whenever a worker next runs.
      await setStatus(store, ep, 'enabled');
      const afterEnabled = await write(store, 'pause.deleted');
      const again = worker(store, sender);
      again.start();
      await eventually(async () => sentTo(sender, ep).includes(afterEnabled), 'the event written after it was enabled again');
      assert.deepEqual(sentTo(sender, ep), [first, afterEnabled]);
      await again.stop();
    });

    it('two workers on one database, endpoints created among the writes: each endpoint gets each event after its creation, once', async () => {
      const a = await open();
      const b = await open();
      const senderA = new Sender();
      const senderB = new Sender();
      const wa = worker(a, senderA, { batch: 3 });
      const wb = worker(b, senderB, { batch: 3 });
      wa.start();
      wb.start();
      const owed = new Map<string, string[]>();
      const endpoints: string[] = [];
      for (let round = 0; round < 4; round++) {
        const ep = await endpoint(round % 2 ? a : b, ['many.*']);
        endpoints.push(ep);
        owed.set(ep, []);
        for (let i = 0; i < 5; i++) {
          const id = await write(i % 2 ? a : b, 'many.created');
          for (const e of endpoints) owed.get(e)!.push(id);
        }
        wa.wake();
        wb.wake();
      }
      const sent = (ep: string): string[] => [...sentTo(senderA, ep), ...sentTo(senderB, ep)];
      await eventually(async () => endpoints.every((ep) => sent(ep).length >= owed.get(ep)!.length), 'every endpoint served', 20_000);
      await wa.stop();
      await wb.stop();
      for (const ep of endpoints) {
        assert.deepEqual(sent(ep).sort(), owed.get(ep)!.sort(), `endpoint ${endpoints.indexOf(ep)}: each event after its creation, once`);
        assert.equal((await deliveriesTo(a, ep)).length, owed.get(ep)!.length, 'one delivery per event');
      }
    });

    it('the purge keeps events not yet dispatched to an enabled endpoint, and those of pending deliveries', async () => {
      const store = await open();
      const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
      const core = { store, config: resolveConfig({ databaseUrl: url, eventRetentionDays: 30, logLevel: 'silent' }), clock: () => new Date(), log: silent };
      // The endpoints of the tests before are disabled: owed nothing, they hold nothing back.
      for (const e of (await store.list('webhook-endpoints', { where: [], orderBy: [{ path: 'id', desc: false }], limit: 100 })).rows) await setStatus(store, e.id, 'disabled');
      const ep = await endpoint(store, ['kept.*']);
      const owedIds = [await write(store, 'kept.created', old), await write(store, 'kept.updated', old)];
      const unowed = await write(store, 'other.created', old);
      // No worker has run: the endpoint is owed both, so nothing after its creation goes.
      assert.equal(await purgeExpiredEvents(core), 0);
      for (const id of [...owedIds, unowed]) assert.ok(await store.findEvent(id), 'kept while owed');
      // Dispatched, but the receiver is down: the deliveries are pending, and their events stay.
      const sender = new Sender();
      sender.answer = () => DOWN;
      const w = worker(store, sender);
      w.start();
      await eventually(async () => sentTo(sender, ep).length === 2, 'both attempted');
      await w.stop();
      assert.ok((await deliveriesTo(store, ep)).every((d) => d.status === 'pending'));
      assert.equal(await purgeExpiredEvents(core), 0);
      for (const id of owedIds) assert.ok(await store.findEvent(id), 'kept while a delivery is pending');
      // Delivered: nothing is owed any more, and the old events go.
      await store.transaction(async (tx) => {
        for (const d of await deliveriesTo(store, ep)) await tx.update('webhook-deliveries', { ...d, version: d.version + 1, status: 'succeeded', next_attempt_at: null });
      });
      assert.ok((await purgeExpiredEvents(core)) >= 3);
      for (const id of [...owedIds, unowed]) assert.equal(await store.findEvent(id), null);
    });
  });
}
