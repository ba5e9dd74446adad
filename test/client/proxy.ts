// A fault-injecting HTTP proxy for the client tests: in front of a listening Canon, it passes each request on, drops its connection before or after the server saw it, answers in the server's place, or rewrites the server's JSON answer.
import { createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does with one request: pass it on, drop it before or after the server saw it, answer itself (a string body as is, anything else as JSON), or pass it on and rewrite the JSON answer. */
export type Fault =
  | 'pass'
  | 'drop-before'
  | 'drop-after'
  | { status: number; headers?: OutgoingHttpHeaders; body?: unknown }
  | { rewrite: (body: Record<string, unknown>) => Record<string, unknown> };

export interface Seen {
  method: string;
  url: string;
  key: string | undefined;
  at: number;
}

/** A proxy in front of `upstream` whose `plan` decides each request's fate; `seen` lists every request it got. */
export async function faultProxy(upstream: string, plan: (req: IncomingMessage, n: number) => Fault): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const target = new URL(upstream);
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, key: req.headers['idempotency-key'] as string | undefined, at: Date.now() });
    const fault = plan(req, seen.length);
    if (fault === 'drop-before') {
      req.socket.destroy();
      return;
    }
    if (typeof fault === 'object' && 'status' in fault) {
      req.resume();
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      res.end(fault.body === undefined ? '' : typeof fault.body === 'string' ? fault.body : JSON.stringify(fault.body));
      return;
    }
    const headers = typeof fault === 'object' ? { ...req.headers, 'accept-encoding': 'identity' } : req.headers;
    const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      if (fault === 'drop-after') {
        // The server acted and answered; the client never hears it.
        answer.resume();
        answer.on('end', () => req.socket.destroy());
        return;
      }
      if (typeof fault === 'object') {
        // The answer's JSON changed on the way (identity coding: asked for below), its length recomputed.
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const text = JSON.stringify(fault.rewrite(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>));
          const headers = { ...answer.headers, 'content-length': String(Buffer.byteLength(text)) };
          delete headers['transfer-encoding'];
          res.writeHead(answer.statusCode!, headers);
          res.end(text);
        });
        return;
      }
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => req.socket.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Canon's error body (DESIGN §5), for answers the proxy gives in the server's place. */
export const errorBody = (code: string, message = code) => ({ error: { code, message, timestamp: new Date().toISOString(), request_id: 'proxy' } });
