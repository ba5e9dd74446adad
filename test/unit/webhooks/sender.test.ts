// Issue 15 (DESIGN §9): WebhookSender against real HTTPS receivers: signed POSTs, no redirects, bounded time and memory, connection reuse, TLS trust only via NODE_EXTRA_CA_CERTS, and the SSRF checks on the address connected to.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { WebhookSender, type SendInput } from '../../../src/webhooks/sender.js';
import { generateWebhookSecret } from '../../../src/webhooks/signature.js';
import { CertDir, type CertFiles } from '../../support/certs.js';
import type { SendJob, SendResult } from '../../support/webhook-send-child.js';

const CHILD = fileURLToPath(new URL('../../support/webhook-send-child.js', import.meta.url));
const CHILD_LIMIT_MS = 30_000;

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

interface Receiver {
  port: number;
  requests: Received[];
  /** TCP connections accepted so far. */
  readonly connections: number;
  url(path?: string, host?: string): string;
  close(): Promise<void>;
}

/** A real HTTPS receiver on 127.0.0.1 with the given certificate; `handler` answers once the request body is in. */
async function startReceiver(cert: CertFiles, handler: Handler): Promise<Receiver> {
  const requests: Received[] = [];
  let connections = 0;
  const server: Server = createHttpsServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  server.on('connection', () => connections++);
  server.on('tlsClientError', () => {}); // a client that refuses our certificate is expected in one test
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    requests,
    get connections() {
      return connections;
    },
    url: (path = '/hook', host = '127.0.0.1') => `https://${host}:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs the sender in a child process that trusts `caFile` through NODE_EXTRA_CA_CERTS only. */
function runChild(job: SendJob, caFile: string): Promise<SendResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD], { env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const kill = setTimeout(() => child.kill('SIGKILL'), CHILD_LIMIT_MS);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(kill);
      if (code === 0) resolve(JSON.parse(stdout) as SendResult);
      else reject(new Error(`sender child exited with ${code ?? signal}:\n${stderr}${stdout}`));
    });
    child.stdin.end(JSON.stringify(job));
  });
}

const now = (): number => Math.floor(Date.now() / 1000);
const payload = (n: number): string => JSON.stringify({ id: `evt_${n}`, type: 'order.created', data: { object: { id: `ord_${n}`, total: 1250 } } });

describe('WebhookSender', () => {
  let certs: CertDir;
  let rogueCerts: CertDir;
  let server: CertFiles;
  let rogueServer: CertFiles;
  let caFile: string;
  const secret = generateWebhookSecret();
  const message = (url: string, n = 1, secrets: readonly string[] = [secret]): SendInput => ({ url, id: `evt_${n}`, timestamp: now(), body: payload(n), secrets });

  before(() => {
    certs = new CertDir();
    const ca = certs.ca('ca', 'Canon Test Webhook CA');
    server = certs.leaf('receiver', 'localhost', 'server', ca);
    caFile = ca.certFile;
    // A server certificate from a CA the sender was never told about.
    rogueCerts = new CertDir();
    rogueServer = rogueCerts.leaf('rogue', 'localhost', 'server', rogueCerts.ca('rogue-ca', 'Rogue CA'));
  });
  after(() => {
    certs.remove();
    rogueCerts.remove();
  });

  it('POSTs JSON with the Standard Webhooks headers; 2xx is success and both rotation secrets verify', async () => {
    const receiver = await startReceiver(server, (_req, res) => res.writeHead(204).end());
    try {
      const next = generateWebhookSecret();
      const { outcomes } = await runChild({ allowPrivate: true, sends: [message(receiver.url(), 1, [next, secret])] }, caFile);
      const [outcome] = outcomes;
      assert.deepEqual({ ...outcome, durationMs: 0 }, { ok: true, statusCode: 204, durationMs: 0, error: null, gone: false });
      assert.equal(receiver.requests.length, 1);
      const [received] = receiver.requests;
      assert.equal(received!.method, 'POST');
      assert.equal(received!.url, '/hook');
      assert.equal(received!.headers['content-type'], 'application/json');
      assert.equal(received!.headers['user-agent'], 'Canon-Webhooks/1');
      assert.equal(received!.headers['webhook-id'], 'evt_1');
      assert.equal(received!.body, payload(1));
      const headers = received!.headers as Record<string, string>;
      assert.deepEqual(new Webhook(secret).verify(received!.body, headers), JSON.parse(payload(1)));
      assert.deepEqual(new Webhook(next).verify(received!.body, headers), JSON.parse(payload(1)));
    } finally {
      await receiver.close();
    }
  });

  it('a 500 is a failure with its status code; a 410 says the endpoint is gone', async () => {
    const receiver = await startReceiver(server, (req, res) => res.writeHead(req.url === '/gone' ? 410 : 500, { 'content-type': 'text/plain' }).end('no'));
    try {
      const { outcomes } = await runChild({ allowPrivate: true, sends: [message(receiver.url('/broken')), message(receiver.url('/gone'), 2)] }, caFile);
      assert.deepEqual({ ...outcomes[0], durationMs: 0 }, { ok: false, statusCode: 500, durationMs: 0, error: 'HTTP 500', gone: false });
      assert.deepEqual({ ...outcomes[1], durationMs: 0 }, { ok: false, statusCode: 410, durationMs: 0, error: 'HTTP 410', gone: true });
    } finally {
      await receiver.close();
    }
  });

  it('never follows a redirect: a 302 is a failure and the Location is not requested', async () => {
    const receiver = await startReceiver(server, (req, res) => {
      if (req.url === '/hook') res.writeHead(302, { location: receiver.url('/elsewhere') }).end();
      else res.writeHead(200).end();
    });
    try {
      const { outcomes } = await runChild({ allowPrivate: true, sends: [message(receiver.url())] }, caFile);
      assert.equal(outcomes[0]!.ok, false);
      assert.equal(outcomes[0]!.statusCode, 302);
      assert.match(outcomes[0]!.error!, /redirects are not followed/);
      assert.deepEqual(
        receiver.requests.map((r) => r.url),
        ['/hook'],
      );
    } finally {
      await receiver.close();
    }
  });

  it('gives up after timeoutMs when the receiver never answers', async () => {
    const receiver = await startReceiver(server, () => {});
    try {
      const started = Date.now();
      const { outcomes } = await runChild({ allowPrivate: true, timeoutMs: 300, sends: [message(receiver.url())] }, caFile);
      const [outcome] = outcomes;
      assert.equal(outcome!.ok, false);
      assert.equal(outcome!.statusCode, null);
      assert.match(outcome!.error!, /timeout/);
      assert.ok(outcome!.durationMs >= 250 && outcome!.durationMs < 2000, `${outcome!.durationMs} ms`);
      assert.ok(Date.now() - started < 10_000);
      assert.equal(receiver.requests.length, 1);
    } finally {
      await receiver.close();
    }
  });

  it('a timeout also bounds a body that trickles after a 2xx: the status stands, the attempt ends on time', async () => {
    let timer: NodeJS.Timeout | undefined;
    const receiver = await startReceiver(server, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
      timer = setInterval(() => res.write('.'), 50); // a byte every 50 ms, forever
      res.on('close', () => clearInterval(timer));
    });
    try {
      const { outcomes } = await runChild({ allowPrivate: true, timeoutMs: 400, maxResponseBytes: 1_000_000, sends: [message(receiver.url())] }, caFile);
      assert.equal(outcomes[0]!.ok, true);
      assert.equal(outcomes[0]!.statusCode, 200);
      assert.ok(outcomes[0]!.durationMs >= 350 && outcomes[0]!.durationMs < 2000, `${outcomes[0]!.durationMs} ms`);
    } finally {
      clearInterval(timer);
      await receiver.close();
    }
  });

  it('reads at most maxResponseBytes of a huge body, then drops the connection instead of buffering it', async () => {
    const total = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let written = 0;
    let finished: (complete: boolean) => void;
    const closed = new Promise<boolean>((resolve) => (finished = resolve));
    const receiver = await startReceiver(server, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
      res.on('close', () => finished(res.writableFinished));
      // Honour backpressure: nothing more is produced than the client (and the socket buffers) take.
      const pump = (): void => {
        while (written < total) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    try {
      const { outcomes } = await runChild({ allowPrivate: true, timeoutMs: 10_000, sends: [message(receiver.url())] }, caFile);
      assert.equal(outcomes[0]!.ok, true);
      assert.equal(outcomes[0]!.statusCode, 200);
      assert.ok(outcomes[0]!.durationMs < 5000, `${outcomes[0]!.durationMs} ms`);
      const bound = new Promise<'bound'>((resolve) => setTimeout(() => resolve('bound'), 5000).unref());
      const complete = await Promise.race([closed, bound]);
      assert.equal(complete, false, 'the receiver connection was dropped before the whole body was sent');
      assert.ok(written < total, `${written} of ${total} bytes produced`);
    } finally {
      await receiver.close();
    }
  });

  it('reports Retry-After, in seconds or as an HTTP-date', async () => {
    const receiver = await startReceiver(server, (req, res) => {
      if (req.url === '/seconds') res.writeHead(503, { 'retry-after': '120' }).end();
      else if (req.url === '/date') res.writeHead(429, { 'retry-after': new Date(Date.now() + 600_000).toUTCString() }).end();
      else res.writeHead(503, { 'retry-after': 'whenever' }).end();
    });
    try {
      const { outcomes } = await runChild(
        { allowPrivate: true, sends: [message(receiver.url('/seconds')), message(receiver.url('/date')), message(receiver.url('/garbage'))] },
        caFile,
      );
      assert.equal(outcomes[0]!.statusCode, 503);
      assert.equal(outcomes[0]!.retryAfterSeconds, 120);
      assert.equal(outcomes[1]!.statusCode, 429);
      assert.ok(outcomes[1]!.retryAfterSeconds! >= 595 && outcomes[1]!.retryAfterSeconds! <= 600, String(outcomes[1]!.retryAfterSeconds));
      assert.equal(outcomes[2]!.statusCode, 503);
      assert.equal('retryAfterSeconds' in outcomes[2]!, false);
    } finally {
      await receiver.close();
    }
  });

  it('reuses the connection to an endpoint: two sends, one TCP connection', async () => {
    const receiver = await startReceiver(server, (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'));
    try {
      const { outcomes } = await runChild({ allowPrivate: true, sends: [message(receiver.url(), 1), message(receiver.url(), 2), message(receiver.url('/other'), 3)] }, caFile);
      assert.deepEqual(
        outcomes.map((o) => o.statusCode),
        [200, 200, 200],
      );
      assert.equal(receiver.requests.length, 3);
      assert.equal(receiver.connections, 1);
    } finally {
      await receiver.close();
    }
  });

  it('reports a connection the receiver resets', async () => {
    const receiver = await startReceiver(server, (req) => req.socket.destroy());
    try {
      const { outcomes } = await runChild({ allowPrivate: true, sends: [message(receiver.url())] }, caFile);
      assert.equal(outcomes[0]!.ok, false);
      assert.equal(outcomes[0]!.statusCode, null);
      assert.match(outcomes[0]!.error!, /connection reset/);
      assert.equal(receiver.requests.length, 1, 'a POST is not retried by the HTTP client');
    } finally {
      await receiver.close();
    }
  });

  it('trusts only the system store plus NODE_EXTRA_CA_CERTS: an unknown CA is a TLS error', async () => {
    const receiver = await startReceiver(rogueServer, (_req, res) => res.writeHead(200).end());
    try {
      const { outcomes } = await runChild({ allowPrivate: true, sends: [message(receiver.url())] }, caFile);
      assert.equal(outcomes[0]!.ok, false);
      assert.equal(outcomes[0]!.statusCode, null);
      assert.match(outcomes[0]!.error!, /^TLS error: /);
      assert.equal(receiver.requests.length, 0);
      // The same receiver is accepted by a sender whose NODE_EXTRA_CA_CERTS holds its CA.
      const trusted = await runChild({ allowPrivate: true, sends: [message(receiver.url())] }, join(rogueCerts.dir, 'rogue-ca.pem'));
      assert.equal(trusted.outcomes[0]!.statusCode, 200);
    } finally {
      await receiver.close();
    }
  });

  it('without CANON_WEBHOOK_ALLOW_PRIVATE, loopback targets are refused before any connection (IP literals and names)', async () => {
    const receiver = await startReceiver(server, (_req, res) => res.writeHead(200).end());
    try {
      const { outcomes } = await runChild(
        { allowPrivate: false, sends: [message(receiver.url()), message(receiver.url('/hook', 'localhost')), message(receiver.url('/hook', '[::ffff:127.0.0.1]'))] },
        caFile,
      );
      for (const outcome of outcomes) {
        assert.equal(outcome.ok, false);
        assert.equal(outcome.statusCode, null);
        assert.match(outcome.error!, /^refused address: .*loopback/);
      }
      assert.equal(receiver.connections, 0);
    } finally {
      await receiver.close();
    }
  });

  it('DNS rebinding: a name public at registration and private at delivery is refused on the connecting lookup', async () => {
    const receiver = await startReceiver(server, (_req, res) => res.writeHead(200).end());
    try {
      const url = receiver.url('/hook', 'localhost');
      const rebound = await runChild({ allowPrivate: false, resolutions: [['93.184.216.34'], ['127.0.0.1']], register: url, sends: [message(url)] }, caFile);
      assert.deepEqual(rebound.registration, { allowed: true });
      assert.equal(rebound.outcomes[0]!.ok, false);
      assert.match(rebound.outcomes[0]!.error!, /^refused address: .*127\.0\.0\.1 is in a loopback range/);
      assert.deepEqual(rebound.lookups, ['localhost', 'localhost']);
      assert.equal(receiver.connections, 0);
      // The control: the same resolver path with private addresses allowed reaches the receiver, so the lookup is what refused.
      const allowed = await runChild({ allowPrivate: true, resolutions: [['127.0.0.1']], sends: [message(url)] }, caFile);
      assert.equal(allowed.outcomes[0]!.statusCode, 200);
      assert.deepEqual(allowed.lookups, ['localhost']);
      assert.equal(receiver.connections, 1);
    } finally {
      await receiver.close();
    }
  });

  describe('refusals and failures before TLS (in process)', () => {
    let receiver: Receiver;
    before(async () => (receiver = await startReceiver(server, (_req, res) => res.writeHead(200).end())));
    after(() => receiver.close());

    it('refuses http://, credentials and non-URLs without connecting, even with private addresses allowed', async () => {
      const sender = new WebhookSender({ policy: { allowPrivate: true } });
      try {
        const cases: Array<[string, RegExp]> = [
          [`http://127.0.0.1:${receiver.port}/hook`, /not an https:\/\/ URL/],
          [`https://user:pass@127.0.0.1:${receiver.port}/hook`, /credentials/],
          ['not a url', /not a URL/],
        ];
        for (const [url, reason] of cases) {
          const outcome = await sender.send(message(url));
          assert.equal(outcome.ok, false);
          assert.equal(outcome.statusCode, null);
          assert.match(outcome.error!, reason);
        }
        assert.equal(receiver.connections, 0);
      } finally {
        await sender.close();
      }
    });

    it('refuses private IP literals in every spelling without connecting', async () => {
      const sender = new WebhookSender({ policy: { allowPrivate: false } });
      try {
        const compatible = ['[::127.0.0.1]', '[::7f00:1]', '[::a9fe:a9fe]'];
        for (const host of ['127.0.0.1', '127.1', '0x7f.0.0.1', '2130706433', '[::1]', '[::ffff:7f00:1]', '169.254.169.254', '10.0.0.1', '0.0.0.0', ...compatible]) {
          const outcome = await sender.send(message(`https://${host}:${receiver.port}/hook`));
          assert.equal(outcome.statusCode, null, host);
          assert.match(outcome.error!, /^refused address: /, host);
        }
        assert.equal(receiver.connections, 0);
      } finally {
        await sender.close();
      }
    });

    it('reports a DNS failure and a refused connection as outcomes, never as exceptions', async () => {
      const notFound = new WebhookSender({
        policy: { allowPrivate: true, resolve: async (host) => Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })) },
      });
      const closedPort = await new Promise<number>((resolve) => {
        const probe = createTcpServer().listen(0, '127.0.0.1', () => {
          const { port } = probe.address() as AddressInfo;
          probe.close(() => resolve(port));
        });
      });
      const direct = new WebhookSender({ policy: { allowPrivate: true, resolve: async () => ['127.0.0.1'] } });
      try {
        const dns = await notFound.send(message('https://hooks.example.invalid/hook'));
        assert.equal(dns.statusCode, null);
        assert.match(dns.error!, /^DNS failure: .*ENOTFOUND/);
        const refused = await direct.send(message(`https://localhost:${closedPort}/hook`));
        assert.equal(refused.statusCode, null);
        assert.match(refused.error!, /^connection refused: .*ECONNREFUSED/);
      } finally {
        await notFound.close();
        await direct.close();
      }
    });

    it('reports input it cannot sign as an outcome', async () => {
      const sender = new WebhookSender({ policy: { allowPrivate: true } });
      try {
        const outcome = await sender.send({ ...message(receiver.url()), secrets: ['whsec_broken'] });
        assert.equal(outcome.ok, false);
        assert.match(outcome.error!, /^not sent: .*base64/);
        assert.equal(receiver.connections, 0);
      } finally {
        await sender.close();
      }
    });
  });
});
