// E2E: the state rule under concurrency (DESIGN §9 last bullet): every ordered pair of the reference app's writes on one order, sent at once, ends as some serial order of them would; SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createCustomer, createProduct, startServer, type Mode, type Response, type TestServer } from '../../support/harness.js';
import { PG_URL } from '../../support/pg.js';

const STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const;
type Status = (typeof STATUSES)[number];
/** examples/commerce/orders.ts: the order's declared transitions and the cancel action's states. */
const MOVES: Record<Status, readonly Status[]> = { pending: ['paid', 'cancelled'], paid: ['shipped', 'cancelled'], shipped: ['delivered'], delivered: [], cancelled: [] };
const CANCELLABLE: readonly Status[] = ['pending', 'paid'];

/** What the model knows of one order: whether it exists, its status, its items, and whether a payment holds it. */
interface State {
  exists: boolean;
  status: Status;
  /** Items besides the one every run starts with. */
  added: number;
  /** The item every run starts with is still there. */
  first: boolean;
  /** A payment was accepted and has not completed. */
  held: boolean;
  paid: number;
}

/** An answer as the model predicts it: the status code, and for a 409 whether the payment in flight is what refused it. */
type Answer = '200' | '201' | '202' | '204' | '404' | '409 state' | '409 held';

interface Action {
  name: string;
  /** The request, given the run's order and its first item. */
  send(server: TestServer, run: Run): Promise<Response>;
  /** The answer a serial execution gives from `s`, and the state after it. */
  apply(s: State): [Answer, State];
}

interface Run {
  orderId: string;
  itemId: string;
  customer: string;
  productId: string;
}

const refusedOrGone = (s: State): Answer | undefined => (!s.exists ? '404' : s.held ? '409 held' : undefined);

const ACTIONS: Action[] = [
  {
    name: 'pay',
    send: (server, run) => server.request('POST', `/v2/orders/${run.orderId}/payment`, { key: run.customer }),
    apply: (s) => {
      const refused = refusedOrGone(s);
      if (refused) return [refused, s];
      if (s.status !== 'pending' || s.added + (s.first ? 1 : 0) === 0) return ['409 state', s];
      return ['202', { ...s, held: true }];
    },
  },
  {
    name: 'cancel',
    send: (server, run) => server.request('POST', `/v2/orders/${run.orderId}/cancel`, { key: run.customer }),
    apply: (s) => {
      const refused = refusedOrGone(s);
      if (refused) return [refused, s];
      return CANCELLABLE.includes(s.status) ? ['200', { ...s, status: 'cancelled' }] : ['409 state', s];
    },
  },
  ...STATUSES.map((to): Action => ({
    name: `admin PATCH status=${to}`,
    send: (server, run) => server.request('PATCH', `/v2/orders/${run.orderId}`, { body: { status: to } }),
    apply: (s) => {
      const refused = refusedOrGone(s);
      if (refused) return [refused, s];
      return to === s.status || MOVES[s.status].includes(to) ? ['200', { ...s, status: to }] : ['409 state', s];
    },
  })),
  {
    name: 'item create',
    send: (server, run) => server.request('POST', `/v2/orders/${run.orderId}/order-items`, { key: run.customer, body: { product_id: run.productId, quantity: 1 } }),
    apply: (s) => {
      const refused = refusedOrGone(s);
      if (refused) return [refused, s];
      return s.status === 'pending' ? ['201', { ...s, added: s.added + 1 }] : ['409 state', s];
    },
  },
  {
    name: 'item update',
    send: (server, run) => server.request('PATCH', `/v2/order-items/${run.itemId}`, { key: run.customer, body: { quantity: 3 } }),
    apply: (s) => {
      if (!s.exists || !s.first) return ['404', s];
      if (s.held) return ['409 held', s];
      return s.status === 'pending' ? ['200', s] : ['409 state', s];
    },
  },
  {
    name: 'item delete',
    send: (server, run) => server.request('DELETE', `/v2/order-items/${run.itemId}`, { key: run.customer }),
    apply: (s) => {
      if (!s.exists || !s.first) return ['404', s];
      if (s.held) return ['409 held', s];
      return s.status === 'pending' ? ['204', { ...s, first: false }] : ['409 state', s];
    },
  },
  {
    name: 'admin DELETE order',
    send: (server, run) => server.request('DELETE', `/v2/orders/${run.orderId}`),
    apply: (s) => {
      const refused = refusedOrGone(s);
      if (refused) return [refused, s];
      return ['204', { ...s, exists: false }];
    },
  },
];

/** The worker's half of an accepted payment: the provider answered yes, the order becomes paid, the hold ends. */
function complete(s: State): State {
  return { ...s, held: false, status: 'paid', paid: s.paid + 1 };
}

/** A run's outcome as compared with the model's: both answers, and the order as it ends once no payment is in flight. */
function outcome(a: Answer, b: Answer, s: State): string {
  const order = s.exists ? `${s.status}, ${s.added + (s.first ? 1 : 0)} items, ${s.paid} paid` : 'deleted';
  return `${a} / ${b} → ${order}`;
}

/**
 * Every outcome some serial execution of a and b gives: a before b or b before a, and an accepted payment's
 * completion at any point after it (before the other request, or after it).
 */
function serialOutcomes(a: Action, b: Action, start: State): Set<string> {
  const out = new Set<string>();
  const walk = (s: State, queue: Array<0 | 1>, answers: Answer[]): void => {
    if (s.held) walk(complete(s), queue, answers);
    if (queue.length === 0) {
      // Once a payment has been accepted it completes sometime: the end state is after it.
      if (!s.held) out.add(outcome(answers[0]!, answers[1]!, s));
      return;
    }
    const [which, ...rest] = queue;
    const [answer, next] = (which === 0 ? a : b).apply(s);
    const answered = [...answers];
    answered[which!] = answer;
    walk(next, rest, answered);
  };
  walk(start, [0, 1], []);
  walk(start, [1, 0], []);
  return out;
}

/** The answer as the model names it; a 409 is INVALID_STATE, and names the payment when one in flight refused it. */
function answerOf(res: Response): Answer {
  if (res.status !== 409) return String(res.status) as Answer;
  assert.equal(res.body?.error?.code, 'INVALID_STATE', res.text);
  return /payment .* is processing/.test(String(res.body.error.message)) ? '409 held' : '409 state';
}

const STORES: Mode[] = ['inject', ...(PG_URL ? (['inject/postgres'] as const) : [])];

for (const mode of STORES) {
  describe(`the state rule, every pair of writes on one order at once (${mode})`, () => {
    let server: TestServer;
    let customer: { userId: string; key: string };
    let productId: string;

    before(async () => {
      // The provider answers quickly, so each run's payment settles soon; its completion may land before or after the other request.
      process.env.CANON_PAYMENT_DELAY_MS = '20';
      server = await startServer(mode);
      customer = await createCustomer(server, `pairs-${randomUUID()}@example.com`);
      productId = (await createProduct(server, { price: { amount: 700, currency: 'EUR' } })).id;
    });
    after(async () => {
      delete process.env.CANON_PAYMENT_DELAY_MS;
      await server.close();
    });

    /** A pending order of the customer with one item, as every run starts. */
    const fresh = async (): Promise<Run> => {
      const order = await server.request('POST', '/v2/orders', { key: customer.key, body: {} });
      assert.equal(order.status, 201, order.text);
      const item = await server.request('POST', `/v2/orders/${order.body.id}/order-items`, { key: customer.key, body: { product_id: productId, quantity: 2 } });
      assert.equal(item.status, 201, item.text);
      return { orderId: order.body.id, itemId: item.body.id, customer: customer.key, productId };
    };

    /** The order once no payment of it is processing (10 s at most): its status, items and payments. */
    const settled = async (run: Run): Promise<{ state: string; operations: string[]; total?: number; sum?: number }> => {
      const deadline = Date.now() + 10_000;
      let operations: string[] = [];
      for (;;) {
        const ops = await server.runtime.store.list('operations', {
          where: [{ path: 'object_id', op: 'eq', value: run.orderId }],
          orderBy: [{ path: 'id', desc: false }],
          limit: 10,
        });
        operations = ops.rows.map((o) => String(o.status));
        if (!operations.includes('processing') || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const order = await server.request('GET', `/v2/orders/${run.orderId}`);
      if (order.status === 404) return { state: 'deleted', operations };
      assert.equal(order.status, 200, order.text);
      const items = await server.request('GET', `/v2/orders/${run.orderId}/order-items?limit=100`);
      assert.equal(items.status, 200, items.text);
      const rows = items.body.data as Array<{ quantity: number; unit_price: { amount: number } }>;
      const paid = operations.filter((o) => o === 'succeeded').length;
      return {
        state: `${order.body.status}, ${rows.length} items, ${paid} paid`,
        operations,
        total: order.body.total.amount,
        sum: rows.reduce((n, i) => n + i.quantity * i.unit_price.amount, 0),
      };
    };

    /** The order's paid and cancelled events in log order, once both are in the log (PostgreSQL numbers them just after the commit). */
    const stateEvents = async (orderId: string): Promise<string[]> => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const types = (await server.runtime.store.listEvents(0, 100_000))
          .filter((e) => e.object_id === orderId && (e.type === 'order.paid' || e.type === 'order.cancelled'))
          .map((e) => e.type);
        if (types.length >= 2 || Date.now() > deadline) return types;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    it('each outcome is one a serial order of the two gives; never a payment on a cancelled order, never one left processing', async () => {
      const start: State = { exists: true, status: 'pending', added: 0, first: true, held: false, paid: 0 };
      const pairs = ACTIONS.flatMap((a) => ACTIONS.map((b) => [a, b] as const));
      const failures: string[] = [];
      const paidThenCancelled: string[] = [];
      // A few runs at once, each on an order of its own: fast, and the store sees other transactions besides the pair's.
      const BATCH = 16;
      for (let i = 0; i < pairs.length; i += BATCH) {
        await Promise.all(
          pairs.slice(i, i + BATCH).map(async ([a, b]) => {
            const run = await fresh();
            // Both sent before either is answered: a is sent first.
            const [ra, rb] = await Promise.all([a.send(server, run), b.send(server, run)]);
            const seen = { a: answerOf(ra), b: answerOf(rb) };
            const end = await settled(run);
            const got = `${seen.a} / ${seen.b} → ${end.state}`;
            const allowed = serialOutcomes(a, b, start);
            if (!allowed.has(got)) failures.push(`${a.name} ‖ ${b.name}: got ${got}; a serial order gives one of: ${[...allowed].join(' | ')}`);
            if (end.operations.includes('processing')) failures.push(`${a.name} ‖ ${b.name}: a payment is still processing`);
            // The provider never declines here: a failed payment is a charge made that nothing records.
            if (end.operations.includes('failed')) failures.push(`${a.name} ‖ ${b.name}: a payment failed after the provider was called`);
            if (end.state.startsWith('cancelled') && end.operations.includes('succeeded')) paidThenCancelled.push(run.orderId);
            if (end.total !== end.sum) failures.push(`${a.name} ‖ ${b.name}: the total ${end.total} is not the items' ${end.sum}`);
          }),
        );
      }
      assert.deepEqual(failures, [], `${failures.length} of ${pairs.length} pairs`);
      // A cancelled order with a succeeded payment was paid first and cancelled afterwards, never the reverse.
      for (const id of paidThenCancelled) assert.deepEqual(await stateEvents(id), ['order.paid', 'order.cancelled'], id);
    });
  });
}
