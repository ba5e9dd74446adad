// The canon-client examples (issue 28.9) run as their headers say, against a listening Canon: create an order safely (twice with one key: one order), pay and wait, page through orders.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createCustomer, createProduct, startServer, type TestServer } from '../support/harness.js';

const run = promisify(execFile);
const example = (name: string): string => fileURLToPath(new URL(`../../examples/client/${name}.js`, import.meta.url));

describe('examples/client', () => {
  let server: TestServer;
  let env: Record<string, string>;
  let productId: string;
  before(async () => {
    server = await startServer('listen');
    const customer = await createCustomer(server, 'example-runner@example.com');
    productId = (await createProduct(server, { price: { amount: 1250, currency: 'EUR' } })).id;
    env = { ...process.env, CANON_URL: server.baseUrl!, CANON_API_KEY: customer.key } as Record<string, string>;
  });
  after(async () => server.close());

  const exec = (name: string, extra: Record<string, string> = {}) => run(process.execPath, [example(name)], { env: { ...env, ...extra }, timeout: 60_000 });

  it('create-order, pay-and-wait, page-orders: as their headers describe', async () => {
    const key = 'example-key-1';
    const first = await exec('create-order', { PRODUCT_ID: productId, IDEMPOTENCY_KEY: key });
    const made = /^created order ([0-9a-f-]{36}) with item ([0-9a-f-]{36}) \(key example-key-1\)$/m.exec(first.stdout);
    assert.ok(made, first.stdout + first.stderr);
    // Run again with the same key (a crash and a restart): the stored answers, no second order.
    const again = await exec('create-order', { PRODUCT_ID: productId, IDEMPOTENCY_KEY: key });
    assert.match(again.stdout, new RegExp(`^already created order ${made[1]} with item ${made[2]}`, 'm'));
    const orders = (await server.request('GET', '/v2/orders?limit=100', { key: env.CANON_API_KEY })).body.data;
    assert.equal(orders.length, 1);

    const paid = await exec('pay-and-wait', { ORDER_ID: made[1]! });
    assert.match(paid.stdout, new RegExp(`^payment processing, outcome at /v2/orders/${made[1]}/payment$`, 'm'));
    assert.match(paid.stdout, /^payment succeeded at \S+$/m);
    assert.match(paid.stdout, /^order paid$/m);

    const second = await exec('create-order', { PRODUCT_ID: productId });
    const secondId = /^created order (\S+)/m.exec(second.stdout)![1];
    const paged = await exec('page-orders');
    assert.match(paged.stdout, new RegExp(`^order ${secondId} pending 2500 EUR$`, 'm'));
    assert.match(paged.stdout, /^1 pending$/m);
    assert.match(paged.stdout, /^page 1: 2 of 2$/m);
  });

  it('a refusal is reported with its code and request id, and the exit status is 1', async () => {
    await assert.rejects(exec('pay-and-wait', { ORDER_ID: '00000000-0000-0000-0000-000000000000' }), (err: { code?: number; stderr?: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr ?? '', /^refused: 404 NOT_FOUND: /m);
      return true;
    });
    await assert.rejects(exec('page-orders', { CANON_API_KEY: '' }), (err: { code?: number; stderr?: string }) => err.code === 1 && /set CANON_API_KEY/.test(err.stderr ?? ''));
  });
});
