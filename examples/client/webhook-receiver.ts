// A webhook receiver on node:http (or node:https) with canon-client's createWebhookHandler: verifies each delivery, answers at once, handles each event once, parks failures.
//
//   CANON_WEBHOOK_SECRET=whsec_… PORT=8443 TLS_CERT=cert.pem TLS_KEY=key.pem node dist/examples/client/webhook-receiver.js
//
// Canon delivers only to https:// addresses: give TLS_CERT and TLS_KEY to serve HTTPS here, or run it as plain
// HTTP behind a TLS-terminating proxy. Register it with POST /v2/webhook-endpoints {"url":"https://…/canon/webhooks",
// "events":["order.*"]} and put the secret of the 201 in CANON_WEBHOOK_SECRET (or pass your own `secret` there).
// Failed events are appended to dead-letters.jsonl (DEAD_LETTERS to change it) to be replayed once fixed.
import { appendFile, readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { WebhookEvent } from '../../packages/client/src/event.js';
import { createWebhookHandler } from '../../packages/client/src/webhooks/index.js';

const secret = process.env.CANON_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set CANON_WEBHOOK_SECRET to the endpoint’s whsec_ secret.');
  process.exit(2);
}
const port = Number(process.env.PORT ?? 8443);
const deadLetters = process.env.DEAD_LETTERS ?? 'dead-letters.jsonl';

const handler = createWebhookHandler<WebhookEvent>({
  // During a rotation, list both: CANON_WEBHOOK_SECRET=whsec_new,whsec_old.
  secrets: secret.split(','),
  // Runs after the 200 was sent, once per webhook-id (duplicates are answered 200 and skipped).
  onEvent: async (event, delivery) => {
    if (event.thin) {
      // Over 64 KiB the object is not sent: fetch it from event.data.object.url with your credentials.
      console.log(`${event.type} ${event.data.object.id}: thin, fetch ${event.data.object.url}`);
      return;
    }
    console.log(`${event.type} ${String(event.data.object.id)} (event ${event.id}, signed at ${delivery.timestamp})`);
  },
  // What onEvent threw: kept with the event, to be handled again later.
  deadLetter: async ({ event, error, receivedAt }) => {
    const line = JSON.stringify({ received_at: receivedAt.toISOString(), error: String(error), event });
    await appendFile(deadLetters, `${line}\n`);
  },
});

const routes: RequestListener = (req, res) => {
  if (req.url === '/canon/webhooks') return handler(req, res);
  res.writeHead(404).end();
};
const server =
  process.env.TLS_CERT && process.env.TLS_KEY
    ? createHttpsServer({ cert: await readFile(process.env.TLS_CERT), key: await readFile(process.env.TLS_KEY) }, routes)
    : createHttpServer(routes);
server.listen(port, () => console.log(`receiving Canon webhooks on port ${port} at /canon/webhooks`));

// On SIGTERM: stop taking deliveries, let the events already accepted finish (Canon resends what was not answered).
process.once('SIGTERM', () => {
  server.close();
  void handler.drain().then(() => process.exit(0));
});
