// A real HTTPS webhook receiver for end-to-end tests: routes by path, answers as each test scripts it, and verifies every delivery with the official standardwebhooks library.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { CertFiles } from '../../support/certs.js';

/** What a route answers to its nth request (0-based): a status (with headers), or never (the request hangs). */
export type Answer = number | { status: number; headers?: Record<string, string> } | 'hang';

export interface Route {
  /** The endpoint's current secrets: every delivery must verify with at least one of them. */
  secrets: string[];
  answer: (n: number) => Answer;
}

export interface Received {
  path: string;
  /** Date.now() when the request's body was complete. */
  at: number;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The webhook-id header. */
  id: string;
  /** The status answered, null for a request left hanging. */
  answered: number | null;
  /** The secrets (of the route's, at arrival) that verified this delivery. */
  verifiedWith: string[];
}

export class Receiver {
  readonly requests: Received[] = [];
  /** Deliveries that did not verify with any secret of their route, or came to a path no test registered. */
  readonly problems: string[] = [];
  private readonly routes = new Map<string, Route>();
  private readonly hanging = new Set<ServerResponse>();
  private port = 0;

  private readonly server: Server;

  private constructor(cert: CertFiles) {
    this.server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (body += d));
      req.on('end', () => this.handle(req.url ?? '', req.method ?? '', req.headers, body, res));
    });
  }

  static async start(cert: CertFiles): Promise<Receiver> {
    const receiver = new Receiver(cert);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.port = (receiver.server.address() as AddressInfo).port;
    return receiver;
  }

  url(path: string): string {
    return `https://127.0.0.1:${this.port}${path}`;
  }

  route(path: string, route: Route): void {
    this.routes.set(path, route);
  }

  /** Changes what a route answers (its request count goes on). */
  answer(path: string, answer: (n: number) => Answer): void {
    this.routes.get(path)!.answer = answer;
  }

  secrets(path: string, secrets: string[]): void {
    this.routes.get(path)!.secrets = secrets;
  }

  to(path: string): Received[] {
    return this.requests.filter((r) => r.path === path);
  }

  private handle(path: string, method: string, headers: IncomingHttpHeaders, body: string, res: ServerResponse): void {
    const route = this.routes.get(path);
    const received: Received = { path, at: Date.now(), method, headers, body, id: String(headers['webhook-id'] ?? ''), answered: null, verifiedWith: [] };
    const n = this.to(path).length;
    this.requests.push(received);
    if (!route) {
      this.problems.push(`${method} ${path}: no test registered this path`);
      res.writeHead(404).end();
      return;
    }
    for (const secret of route.secrets) {
      try {
        new Webhook(secret).verify(body, headers as Record<string, string>);
        received.verifiedWith.push(secret);
      } catch {
        // not this secret
      }
    }
    if (received.verifiedWith.length === 0) this.problems.push(`${method} ${path} (webhook-id ${received.id}): no secret of the endpoint verifies it`);
    const answer = route.answer(n);
    if (answer === 'hang') {
      this.hanging.add(res);
      res.on('close', () => this.hanging.delete(res));
      return;
    }
    const { status, headers: extra } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
    received.answered = status;
    res.writeHead(status, { 'content-type': 'text/plain', ...extra }).end(status < 300 ? 'thanks' : 'no');
  }

  close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    return new Promise<void>((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}
