// Baseline for bench/get-by-id.mjs: a bare node:http server answering every request with one fixed,
// product-shaped JSON body (roughly the size of Canon's GET /v2/products/{id} response), so the
// benchmark can report Canon's throughput relative to "Node doing nothing but HTTP".
// Listens on 127.0.0.1:$PORT and exits when its stdin closes (i.e. when the benchmark goes away).
import { executionAsyncResource } from 'node:async_hooks';
import http from 'node:http';
import { Buffer } from 'node:buffer';
import { stopWithParent } from '../lib/lifecycle.mjs';

const id = '01a1ffe5-1ce3-765a-b1f4-2888f357259d';
const product = {
  id,
  name: 'Espresso beans',
  description: 'Dark roast whole beans from Minas Gerais, 1 kg bag.',
  price: { amount: 2490, currency: 'EUR' },
  status: 'active',
  tags: ['coffee', 'beans'],
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  links: [
    { rel: 'self', href: `/v2/products/${id}`, method: 'GET' },
    { rel: 'edit', href: `/v2/products/${id}`, method: 'PATCH' },
  ],
};
const body = Buffer.from(JSON.stringify(product));
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };

// The same keep as Canon's src/runtime/tick-shape.ts: one process.nextTick record stays alive, so this server, too,
// keeps V8's fast path for them after waiting idle for its turn (without it, it measured up to 60 % dearer per request
// in the repeats where it waits: docs/BENCHMARKS.md, issue 17, sixth pass).
const kept = [];
process.nextTick(() => kept.push(executionAsyncResource()));

const port = Number(process.env.PORT ?? 3001);
const host = process.env.HOST ?? '127.0.0.1';

const server = http.createServer((req, res) => {
  // Drain any request body so keep-alive connections stay usable, then answer.
  req.resume();
  res.writeHead(200, headers);
  res.end(body);
});

server.listen(port, host, () => {
  console.log(`bare-http listening on http://${host}:${port} (${body.length}-byte body)`);
});

const stop = () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
stopWithParent(stop);
