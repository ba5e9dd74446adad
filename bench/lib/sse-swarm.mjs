// A load client holding many Server-Sent Events streams over raw HTTP/1.1 sockets (a child of bench/sse.mjs): opens them, then reports when each event reached each stream.
//
//   node bench/lib/sse-swarm.mjs <port> <count> <api key>      (forked with an IPC channel)
//
// Messages to the parent: {type: 'open', open, failed} once every stream answered 200 (or failed), then
// {type: 'event', id, productId, arrivals: [ms…]} per event id once `count` streams saw it or on {type: 'flush'}.
// Times are process.hrtime in ms: CLOCK_MONOTONIC, the same clock in every process of the machine.
import net from 'node:net';
import process from 'node:process';

const [port, countText, apiKey] = process.argv.slice(2);
const COUNT = Number(countText);
/** Connections being opened at once: the server's accept queue and this client's CPU both stay reasonable. */
const OPENING = 200;
const ID = /(?:^|\n)id: ([0-9a-f-]{36})\n/g;
const PRODUCT = /"data":\{"object":\{"id":"([0-9a-f-]{36})"/;

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sockets = [];
/** Per event id: arrival times (ms) and the product it is about. */
const events = new Map();
let open = 0;
let failed = 0;

function seen(id, text, at) {
  let e = events.get(id);
  if (!e) {
    e = { arrivals: [], productId: PRODUCT.exec(text)?.[1] ?? null };
    events.set(id, e);
  }
  e.arrivals.push(at);
  if (e.arrivals.length === COUNT) report(id);
}

function report(id) {
  const e = events.get(id);
  if (!e) return;
  events.delete(id);
  process.send({ type: 'event', id, productId: e.productId, arrivals: e.arrivals });
}

function connect() {
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let headerDone = false;
    let tail = '';
    let last = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nX-API-Key: ${apiKey}\r\n\r\n`);
    });
    socket.on('data', (chunk) => {
      const at = nowMs();
      let text = tail + chunk;
      if (!headerDone) {
        const end = text.indexOf('\r\n\r\n');
        if (end < 0) {
          tail = text;
          return;
        }
        const status = text.slice(0, text.indexOf('\r\n'));
        headerDone = true;
        if (!/^HTTP\/1\.1 200 /.test(status)) {
          failed++;
          socket.destroy();
          resolve(false);
          return;
        }
        open++;
        resolve(true);
        text = text.slice(end + 4);
      }
      // Frames may be split across reads (and chunked framing sits between them): keep a tail to match ids across reads.
      for (const m of text.matchAll(ID)) {
        if (m[1] === last) continue;
        last = m[1];
        seen(m[1], text.slice(m.index), at);
      }
      tail = text.slice(-200);
    });
    socket.on('error', () => {
      if (!headerDone) {
        failed++;
        headerDone = true;
        resolve(false);
      }
    });
    sockets.push(socket);
  });
}

async function main() {
  let next = 0;
  const lane = async () => {
    while (next < COUNT) {
      next++;
      await connect();
    }
  };
  await Promise.all(Array.from({ length: Math.min(OPENING, COUNT) }, lane));
  process.send({ type: 'open', open, failed });
}

process.on('message', (m) => {
  if (m.type === 'flush') {
    for (const id of [...events.keys()]) report(id);
    process.send({ type: 'flushed' });
  } else if (m.type === 'close') {
    for (const s of sockets) s.destroy();
    process.send({ type: 'closed' });
    setTimeout(() => process.exit(0), 100);
  }
});
process.on('disconnect', () => process.exit(0));

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
