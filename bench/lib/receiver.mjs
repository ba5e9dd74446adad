// A local HTTPS webhook receiver for the benchmarks: a CA and a 127.0.0.1 certificate made by the openssl CLI, 200 at once, every delivery verified and timed.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import https from 'node:https';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import { makeTempDir, onCleanup } from './processes.mjs';

const OPENSSL_CONFIG = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
`;

/** A throw-away CA and a server certificate for 127.0.0.1 signed by it (EC P-256): Canon trusts the CA through NODE_EXTRA_CA_CERTS. */
export function makeCertificates() {
  const dir = makeTempDir('canon-bench-certs-');
  const config = path.join(dir, 'openssl.cnf');
  writeFileSync(config, OPENSSL_CONFIG);
  const openssl = (args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', '-new', '-config', config, '-extensions', 'ca_ext', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Canon bench CA']);
  openssl(['req', '-new', '-config', config, ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  openssl([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-set_serial',
    `0x${randomBytes(8).toString('hex')}`,
    '-days',
    '2',
    '-sha256',
    '-extfile',
    config,
    '-extensions',
    'server_ext',
    '-out',
    'server.pem',
  ]);
  return { caFile: path.join(dir, 'ca.pem'), cert: readFileSync(path.join(dir, 'server.pem')), key: readFileSync(path.join(dir, 'server.key')) };
}

/**
 * Answers every POST with 200 as soon as its body is complete. Each delivery is verified with the official
 * standardwebhooks library against the secrets of its path (a delivery that does not verify is a problem that
 * invalidates the run) and recorded: its webhook-id, arrival time (performance.now(), same clock as the
 * benchmark's) and, when asked, the parsed event. `onDelivery` sees each one as it arrives.
 */
export async function startReceiver(certs, { keepBodies = false } = {}) {
  const routes = new Map();
  const problems = [];
  const server = https.createServer({ cert: certs.cert, key: certs.key, keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const route = routes.get(req.url);
      if (!route) {
        problems.push(`POST ${req.url}: no route`);
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      let event;
      try {
        event = route.verifier.verify(body, req.headers);
      } catch (err) {
        if (problems.length < 20) problems.push(`POST ${req.url} webhook-id ${req.headers['webhook-id']}: ${err.message}`);
        res.writeHead(400).end();
        return;
      }
      // A receiver that takes `delayMs` to answer (as real ones do) bounds a worker by its attempts in flight, not its CPU.
      if (route.delayMs > 0) setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok'), route.delayMs);
      else res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
      const id = String(req.headers['webhook-id']);
      route.attempts++;
      const seen = route.ids.get(id);
      if (seen === undefined) {
        route.ids.set(id, at);
        route.unique++;
        route.first ??= at;
        route.last = at;
      }
      const delivery = { id, at, atEpochMs: Date.now(), duplicate: seen !== undefined, event: keepBodies ? event : undefined };
      route.onDelivery?.(delivery, route);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  onCleanup(close);
  return {
    problems,
    url: (p) => `https://127.0.0.1:${port}${p}`,
    /** A path with the endpoint's secret; returns its tally (attempts, unique ids, first and last arrival). `delayMs`: how long it takes to answer. */
    route(p, secret, onDelivery, delayMs = 0) {
      const route = { verifier: new Webhook(secret), attempts: 0, unique: 0, ids: new Map(), first: undefined, last: undefined, onDelivery, delayMs };
      routes.set(p, route);
      return route;
    },
    close,
  };
}
