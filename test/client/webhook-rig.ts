// A Canon process that delivers webhooks to an HTTPS server of the test's own (a test CA it trusts), each path answered by a listener the test gives: for canon-client's receiving helpers.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { CertDir } from '../support/certs.js';
import { ADMIN_KEY } from '../support/harness.js';
import { startCanon, type CanonProcess } from '../support/processes.js';
import { all, call, scratchStore, type Json, type Reply, type Scratch, type StoreKind } from '../e2e/webhooks/api.js';

export interface Endpoint {
  id: string;
  secret: string;
  path: string;
}

export interface ReceiverRig {
  canon: CanonProcess;
  /** A request to Canon as the admin. */
  api(method: string, path: string, body?: unknown): Promise<Reply>;
  /** Registers an endpoint for `events` on a fresh path, served by the listener `listen` makes with the endpoint's secret. */
  endpoint(listen: (secret: string) => RequestListener, events?: string[]): Promise<Endpoint>;
  /** Disables an endpoint, so that later tests' events do not reach it. */
  retire(endpoint: Endpoint): Promise<void>;
  /** Creates a product; returns it. */
  product(name?: string): Promise<Json>;
  /** Every delivery Canon recorded for an endpoint. */
  deliveries(endpoint: Endpoint): Promise<Json[]>;
  close(): Promise<void>;
}

/** Starts an HTTPS server routing by path, and `canon serve` on a fresh `store` trusting its CA; `env` adds to what delivery needs. */
export async function startReceiverRig(store: StoreKind, env: Record<string, string> = {}): Promise<ReceiverRig> {
  const certs = new CertDir();
  const ca = certs.ca('ca', 'Canon Client Test CA');
  const leaf = certs.leaf('receiver', 'localhost', 'server', ca);
  const routes = new Map<string, RequestListener>();
  const server: Server = createServer({ cert: leaf.cert, key: leaf.key }, (req: IncomingMessage, res: ServerResponse) => {
    const listener = routes.get(req.url ?? '');
    if (listener) return void listener(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let scratch: Scratch | undefined;
  let canon: CanonProcess | undefined;
  const close = async (): Promise<void> => {
    await canon?.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await scratch?.remove();
    certs.remove();
  };
  try {
    scratch = await scratchStore(store);
    canon = await startCanon({
      DATABASE_URL: scratch.databaseUrl,
      CANON_ADMIN_API_KEY: ADMIN_KEY,
      CANON_SECRET: 'canon-client-webhooks',
      // Read by Node at start: the child trusts the test CA.
      NODE_EXTRA_CA_CERTS: ca.certFile,
      CANON_WEBHOOK_ALLOW_PRIVATE: '1',
      CANON_EVENT_POLL_MS: '100',
      ...env,
    });
  } catch (err) {
    await close();
    throw err;
  }
  const base = canon.url;
  const api = (method: string, path: string, body?: unknown): Promise<Reply> => call(base, method, path, body);
  return {
    canon,
    api,
    async endpoint(listen, events = ['product.*']) {
      const path = `/hooks/${randomUUID()}`;
      const res = await api('POST', '/v2/webhook-endpoints', { url: `https://127.0.0.1:${port}${path}`, events });
      if (res.status !== 201) throw new Error(`registering an endpoint: ${res.status} ${res.text}`);
      // Nothing is owed to the endpoint before the test makes an event, so the route is in place in time.
      routes.set(path, listen(res.body.secret as string));
      return { id: res.body.id as string, secret: res.body.secret as string, path };
    },
    async retire(endpoint) {
      const res = await api('PATCH', `/v2/webhook-endpoints/${endpoint.id}`, { status: 'disabled' });
      if (res.status !== 200) throw new Error(`disabling an endpoint: ${res.status} ${res.text}`);
    },
    async product(name = `product ${randomUUID()}`) {
      const res = await api('POST', '/v2/products', { name, price: { amount: 990, currency: 'EUR' } });
      if (res.status !== 201) throw new Error(`creating a product: ${res.status} ${res.text}`);
      return res.body;
    },
    deliveries: (endpoint) => all(base, `/v2/webhook-deliveries?endpoint_id=${endpoint.id}&limit=100`),
    close,
  };
}

/** A request as it arrived: headers and the raw body bytes. */
export interface Captured {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A listener that records each request whole and answers 200. */
export function capture(into: Captured[]): RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      into.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  };
}
