// Follows a Canon server's event stream with canon-client's openEventStream: prints each event as it is written, resumes by itself across disconnects and restarts, stops on Ctrl-C.
//
//   CANON_URL=http://127.0.0.1:3000 CANON_API_KEY=$(cat data/.dev-admin-key) node dist/examples/client/stream.js [after-event-id] [type,type…]
//
// Without an event id it starts with the next event written; with one (the last you handled) it first sends
// what followed it. The second argument filters by type (`order.*,product.created`).
import { openEventStream } from '../../packages/client/src/stream.js';

const base = process.env.CANON_URL ?? 'http://127.0.0.1:3000';
const key = process.env.CANON_API_KEY;
if (!key) {
  console.error('Set CANON_API_KEY to an API key of the server (npm start prints a development admin key).');
  process.exit(2);
}
const [after, type] = process.argv.slice(2);

// Ctrl-C ends the loop cleanly: the connection is closed and no reconnection is made.
const controller = new AbortController();
process.once('SIGINT', () => controller.abort());

const events = openEventStream({
  url: `${base}/events`,
  fetch,
  // Asked before every connection: a token that expires would be refreshed here.
  headers: async () => ({ 'x-api-key': key }),
  ...(after ? { after } : {}),
  ...(type ? { type: type.split(',') } : {}),
  signal: controller.signal,
});

try {
  for await (const event of events) {
    // Keep event.id somewhere durable to resume from it after a restart of this program (the first argument).
    console.log(`${event.created_at} #${event.sequence} ${event.type} ${String(event.data.object.id)} (event ${event.id})`);
  }
  console.error('stopped');
} catch (err) {
  // An error answer (a revoked key: 401; an event id no longer kept: 400) ends the stream with a CanonError.
  console.error(err);
  process.exitCode = 1;
}
