// Servers for the `canon check` tests, in plain node:http: one that breaks chosen conventions, one with network trouble.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FixtureServer {
  url: string;
  /** Requests seen, `METHOD /path?query`. */
  requests: string[];
  close(): Promise<void>;
}

export const FIXTURE_KEY = 'fixture-secret';
export const FIXTURE_ITEMS = 150;

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, requests: string[]): Promise<FixtureServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A collection `/widgets` that breaks exactly these conventions: errors are plain text, items have no ETag, the list
 * is the whole set (150 items, whatever the parameters: unbounded, unknown filters, sort and fields accepted with 200)
 * and there are no rate-limit headers. Everything else conforms: OPTIONS with Allow, 405 with Allow, 404, 400 for a
 * malformed limit, 406, 401 without the key, `Cache-Control: private, no-cache`. Writes: POST creates (201, no
 * Location, Idempotency-Key ignored), a body that is not JSON is 415, DELETE of an item is 204. `count()`: items now.
 */
export function startNonConforming(): Promise<FixtureServer & { count(): number }> {
  const items = Array.from({ length: FIXTURE_ITEMS }, (_, i) => ({ id: `w${i + 1}`, name: `Widget ${i + 1}` }));
  let next = FIXTURE_ITEMS;
  const text = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(body);
  };
  const server = listen((req, res) => {
    const url = new URL(req.url!, 'http://fixture');
    const item = /^\/widgets\/([^/]+)$/.exec(url.pathname);
    const known = url.pathname === '/widgets' || item !== null;
    if (!known) return text(res, 404, 'Not Found');
    const allow = item ? 'GET, DELETE, OPTIONS' : 'GET, POST, OPTIONS';
    if (req.method === 'OPTIONS') return void res.writeHead(200, { allow, 'content-length': '0' }).end();
    if (!allow.split(', ').includes(req.method!)) return text(res, 405, 'Method Not Allowed', { allow });
    if (req.headers['x-api-key'] !== FIXTURE_KEY) return text(res, 401, 'Unauthorized', { 'www-authenticate': 'ApiKey' });
    if (req.method === 'DELETE') {
      const at = items.findIndex((i) => i.id === item![1]);
      if (at < 0) return text(res, 404, 'Not Found');
      items.splice(at, 1);
      return void res.writeHead(204).end();
    }
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        if (!/json/.test(req.headers['content-type'] ?? '')) return text(res, 415, 'Unsupported Media Type');
        const created = { ...(JSON.parse(body) as { name: string }), id: `w${++next}` };
        items.push(created);
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(created));
      });
      return;
    }
    if (/image\/png/.test(req.headers.accept ?? '')) return text(res, 406, 'Not Acceptable');
    const limit = url.searchParams.get('limit');
    if (limit !== null && !/^\d+$/.test(limit)) return text(res, 400, 'Bad Request: limit must be a number');
    const json = { 'content-type': 'application/json', 'cache-control': 'private, no-cache' };
    if (item) {
      const found = items.find((i) => i.id === item[1]);
      return found ? void res.writeHead(200, json).end(JSON.stringify(found)) : text(res, 404, 'Not Found');
    }
    res.writeHead(200, json).end(JSON.stringify(items));
  }, []);
  return server.then((s) => ({ ...s, count: () => items.length }));
}

/**
 * Network trouble: `GET /things` (no query, Accept: application/json) answers a well-formed page; a GET of an item hangs (never answers);
 * every other request has its connection reset.
 */
export function startTroubled(): Promise<FixtureServer> {
  const page = {
    data: [
      { id: 'a', name: 'A' },
      { id: 'b', name: 'B' },
    ],
    pagination: { next_cursor: null, has_more: false },
  };
  return listen((req, res) => {
    if (req.method === 'GET' && req.url === '/things' && req.headers.accept === 'application/json') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, no-cache' }).end(JSON.stringify(page));
      return;
    }
    if (req.method === 'GET' && /^\/things\/[^/?]+$/.test(req.url!)) return; // hangs until the client gives up
    req.socket.destroy();
  }, []);
}
