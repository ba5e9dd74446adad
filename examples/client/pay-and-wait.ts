// Example: paying an order and waiting for the outcome with canon-client: the 202's operation handle, done() polling its Location (DESIGN §9). Run: CANON_URL=… CANON_API_KEY=… ORDER_ID=… node dist/examples/client/pay-and-wait.js
import { CanonError, createClient, OperationFailedError, OperationTimeoutError } from '../../packages/client/src/index.js';

const apiKey = process.env.CANON_API_KEY;
const orderId = process.env.ORDER_ID;
if (!apiKey || !orderId) {
  console.error('set CANON_API_KEY and ORDER_ID (and CANON_URL, default http://127.0.0.1:3000)');
  process.exit(1);
}
const client = createClient({ baseUrl: process.env.CANON_URL ?? 'http://127.0.0.1:3000', apiKey });

try {
  const payment = await client.orders.pay(orderId);
  console.log(`payment ${payment.status}, outcome at ${payment.location}`);
  const outcome = await payment.done({ timeout: 30_000 });
  console.log(`payment ${outcome.status} at ${outcome.updated_at}`);
  console.log(`order ${(await client.orders.get(orderId)).status}`);
} catch (err) {
  if (err instanceof OperationFailedError) console.error(`payment failed: ${(err.result as { error?: string }).error}`);
  else if (err instanceof OperationTimeoutError) console.error(`still processing after 30 s; read ${err.location} later`);
  else if (err instanceof CanonError) console.error(`refused: ${err.status} ${err.code}: ${err.message}`);
  else throw err;
  process.exitCode = 1;
}
