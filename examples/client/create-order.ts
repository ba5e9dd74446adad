// Example: creating an order safely under retries with canon-client: one Idempotency-Key per intent, so a retry (by the client, or by running this again with the same key) never creates a second order (DESIGN §11). Run: CANON_URL=… CANON_API_KEY=… PRODUCT_ID=… [IDEMPOTENCY_KEY=…] node dist/examples/client/create-order.js
import { CanonError, CanonNetworkError, createClient, responseOf } from '../../packages/client/src/index.js';

const apiKey = process.env.CANON_API_KEY;
const productId = process.env.PRODUCT_ID;
if (!apiKey || !productId) {
  console.error('set CANON_API_KEY and PRODUCT_ID (and CANON_URL, default http://127.0.0.1:3000)');
  process.exit(1);
}
const client = createClient({
  baseUrl: process.env.CANON_URL ?? 'http://127.0.0.1:3000',
  apiKey,
  // Up to 5 tries in 30 s: network failures, 429, 503 and a key still in use are retried with backoff.
  retries: { attempts: 5, maxDelayMs: 10_000, maxElapsedMs: 30_000 },
});

// The key names this intent. Keep it (a database row, a job's id) and send it again after a crash: the server
// answers the first request's result instead of acting twice, for 24 hours.
const key = process.env.IDEMPOTENCY_KEY ?? crypto.randomUUID();
try {
  const order = await client.orders.create({ currency: 'EUR' }, { idempotencyKey: `${key}:order` });
  const item = await client.orders.items(order.id!).create({ product_id: productId, quantity: 2 }, { idempotencyKey: `${key}:item` });
  console.log(`${responseOf(order)?.replayed ? 'already created' : 'created'} order ${order.id} with item ${item.id} (key ${key})`);
} catch (err) {
  if (err instanceof CanonError) console.error(`refused: ${err.status} ${err.code}: ${err.message} (request ${err.requestId}, ${err.attempts} tries)`);
  else if (err instanceof CanonNetworkError) console.error(`no answer after ${err.attempts} tries; run again with IDEMPOTENCY_KEY=${key}`);
  else throw err;
  process.exitCode = 1;
}
