// Example: paging through orders with canon-client: every item across pages (`for await`), then page by page in another style (DESIGN §6). Run: CANON_URL=… CANON_API_KEY=… node dist/examples/client/page-orders.js
import { createClient } from '../../packages/client/src/index.js';

const apiKey = process.env.CANON_API_KEY;
if (!apiKey) {
  console.error('set CANON_API_KEY (and CANON_URL, default http://127.0.0.1:3000)');
  process.exit(1);
}
const client = createClient({ baseUrl: process.env.CANON_URL ?? 'http://127.0.0.1:3000', apiKey });

// Every pending order, newest first: the client follows each page's `next` link until there is none.
let pending = 0;
for await (const order of client.orders.list({ status: 'pending', sort: '-created_at', limit: 50 })) {
  pending++;
  console.log(`order ${order.id} ${order.status} ${order.total?.amount} ${order.total?.currency}`);
}
console.log(`${pending} pending`);

// The same collection page by page, numbered (`page` style: each page says the total).
for await (const page of client.orders.list({ style: 'page', limit: 10 }).pages()) {
  console.log(`page ${page.pagination?.page}: ${page.data.length} of ${page.pagination?.total}`);
}
