// Issue 15 (DESIGN §9, at-least-once): 500 events pending while the receiver is down, the delivering process SIGKILLed, a new one started on the same database: every event reaches the receiver, none lost, each verified by standardwebhooks.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it, type TestContext } from 'node:test';
import { CertDir, type CertFiles } from '../../support/certs.js';
import { eventually } from '../../support/eventually.js';
import { ADMIN_KEY, TEST_PROCESS_ENV } from '../../support/harness.js';
import { PG_URL } from '../../support/pg.js';
import { startCanon, type CanonProcess } from '../../support/processes.js';
import { all, call, pool, scratchStore, STORES, type Json, type Scratch, type StoreKind } from './api.js';
import { Receiver } from './receiver.js';
import { reapOnExit } from '../../support/reaper.js';

const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const EVENTS = 500;
/**
 * A first attempt at once, then one every ~4 s (±20 %) for at least 44 s: no delivery runs out of attempts while
 * the receiver refuses and the process is down, however the kill falls, and the refusals stay a light load.
 */
const SCHEDULE = ['0', ...Array<string>(14).fill('4')].join(',');
/** A delivery claimed by the killed process is due again when its lease ends (CANON_WORKER_LEASE_MS, 5 s here), plus a retry delay and slack. */
const RECOVERY_MS = 45_000;

/** Whether this build's CLI has `canon worker` (the worker role alone, for CANON_WORKER=off deployments). */
function cliHasWorker(): boolean {
  const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8', timeout: 20_000 });
  return /^\s+worker\b/m.test(help.stdout ?? '');
}
const WORKER_SKIP = !PG_URL
  ? 'CANON_TEST_DATABASE_URL is not set: the separate worker runs on PostgreSQL only'
  : cliHasWorker()
    ? false
    : '`canon worker` is not in src/cli/main.ts yet: the CANON_WORKER=off + `canon worker` variant cannot run';

/** A `canon worker` process (no HTTP): started once it says it is running. */
async function startWorkerProcess(env: Record<string, string>): Promise<{ child: ChildProcess; stop(): Promise<void> }> {
  const child = reapOnExit(
    spawn(process.execPath, [CLI, 'worker'], {
      env: { ...process.env, CANON_LOG_LEVEL: 'warn', CANON_SEED: '0', CANON_RATE_LIMIT: 'off', ...TEST_PROCESS_ENV, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`canon worker did not start in 20 s:\n${output}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      if (/worker running/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`canon worker exited with ${code}:\n${output}`));
    });
  });
  return {
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

function sigkill(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

interface Scenario {
  /** The process the API requests go to. */
  api: () => CanonProcess;
  /** SIGKILLs the process that delivers and starts its replacement on the same database. */
  killAndRestart: () => Promise<void>;
}

/**
 * The receiver refuses (503) while 500 products are created; the delivering process is killed with deliveries
 * claimed and in flight; its replacement, the receiver now answering 200, delivers every event at least once.
 */
async function survivesKill(t: TestContext, receiver: Receiver, scenario: Scenario): Promise<void> {
  const started = Date.now();
  const path = `/hooks/${randomUUID()}`;
  let up = false;
  const created = await call(scenario.api().url, 'POST', '/v2/webhook-endpoints', { url: receiver.url(path), events: ['product.*'] });
  assert.equal(created.status, 201, created.text);
  receiver.route(path, { secrets: [created.body.secret as string], answer: () => (up ? 200 : 503) });

  const products = await pool(
    Array.from({ length: EVENTS }, (_, i) => i),
    8,
    async (i) => {
      const res = await call(scenario.api().url, 'POST', '/v2/products', { name: `crash-${i}`, price: { amount: i + 1, currency: 'EUR' } });
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    },
  );
  // The worker is busy attempting (and being refused) when the kill comes.
  await eventually(async () => receiver.to(path).length > 0, 'the first refused attempt', 20_000);
  const refusedBeforeKill = receiver.to(path).length;
  await scenario.killAndRestart();
  up = true;
  t.diagnostic(`${EVENTS} products created and the worker killed after ${Date.now() - started} ms (${refusedBeforeKill} attempts refused before the kill)`);

  const wanted = new Set(products);
  const events = (await all(scenario.api().url, '/events?type=product.created&limit=100')).filter((e) => wanted.has(e.data.object.id as string));
  assert.equal(events.length, EVENTS);
  const ids = events.map((e) => e.id as string);
  const missing = (): string[] => {
    const delivered = new Set(
      receiver
        .to(path)
        .filter((r) => r.answered === 200)
        .map((r) => r.id),
    );
    return ids.filter((id) => !delivered.has(id));
  };
  const recoveryStart = Date.now();
  try {
    await eventually(async () => missing().length === 0, 'every event delivered after the restart', RECOVERY_MS, 200);
  } catch (err) {
    const lost = new Set(missing());
    const list = await all(scenario.api().url, `/v2/webhook-deliveries?endpoint_id=${created.body.id}&limit=100`);
    const of = list.filter((d) => lost.has(d.event_id as string));
    const summary = of
      .slice(0, 3)
      .map((d) => ({ status: d.status, attempts: (d.attempts as Json[]).length, next_attempt_at: d.next_attempt_at, last: (d.attempts as Json[]).at(-1) }));
    throw new Error(
      `${(err as Error).message}: ${lost.size} of ${EVENTS} never delivered; ${list.length} deliveries, ${of.length} of them for undelivered events, ` +
        `now ${new Date().toISOString()}, e.g. ${JSON.stringify(summary)}`,
    );
  }
  t.diagnostic(`all ${EVENTS} delivered ${Date.now() - recoveryStart} ms after the restart (${receiver.to(path).length} requests in all)`);

  // One delivery per event (dispatch is transactional), each recorded as succeeded.
  const deliveries = await eventually(
    async () => {
      const list = await all(scenario.api().url, `/v2/webhook-deliveries?endpoint_id=${created.body.id}&limit=100`);
      return list.length === EVENTS && list.every((d) => d.status === 'succeeded') ? list : undefined;
    },
    'every delivery recorded as succeeded',
    15_000,
    200,
  );
  assert.equal(new Set(deliveries.map((d: Json) => d.event_id)).size, EVENTS);
  assert.deepEqual(new Set(deliveries.map((d: Json) => d.event_id)), new Set(ids));
  assert.deepEqual(receiver.problems, []);
  const disabled = await call(scenario.api().url, 'PATCH', `/v2/webhook-endpoints/${created.body.id}`, { status: 'disabled' });
  assert.equal(disabled.status, 200);
}

describe('webhook deliveries survive a SIGKILLed worker', () => {
  let certs: CertDir;
  let ca: CertFiles;
  let receiver: Receiver;
  const cleanups: Array<() => Promise<void>> = [];

  before(async () => {
    certs = new CertDir();
    ca = certs.ca('ca', 'Canon Test Webhook CA');
    receiver = await Receiver.start(certs.leaf('receiver', 'localhost', 'server', ca));
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await receiver?.close();
    certs?.remove();
  });

  const envFor = (scratch: Scratch): Record<string, string> => ({
    DATABASE_URL: scratch.databaseUrl,
    CANON_ADMIN_API_KEY: ADMIN_KEY,
    CANON_SECRET: 'webhooks-crash-secret',
    NODE_EXTRA_CA_CERTS: ca.certFile,
    CANON_WEBHOOK_ALLOW_PRIVATE: '1',
    CANON_WEBHOOK_RETRY_SCHEDULE: SCHEDULE,
    CANON_EVENT_POLL_MS: '100',
    // A short lease (the default is 30 s) so the killed process's claims come due again quickly; attempts stay shorter.
    CANON_WORKER_LEASE_MS: '5000',
    CANON_WEBHOOK_TIMEOUT_MS: '2000',
    CANON_OPERATION_TIMEOUT_MS: '2000',
    // Hundreds of synchronous SQLite commits on a busy machine can stall the loop: a 503 here would test the overload guard, not deliveries.
    ...TEST_PROCESS_ENV,
  });
  const scratchFor = async (kind: StoreKind): Promise<Scratch> => {
    const scratch = await scratchStore(kind);
    cleanups.push(() => scratch.remove());
    return scratch;
  };

  for (const kind of STORES) {
    it(`embedded worker (${kind}): canon serve killed with 500 deliveries pending, restarted, delivers all of them`, { timeout: 120_000 }, async (t) => {
      const env = envFor(await scratchFor(kind));
      let canon = await startCanon(env);
      cleanups.push(() => canon.stop());
      await survivesKill(t, receiver, {
        api: () => canon,
        killAndRestart: async () => {
          await sigkill(canon.child);
          canon = await startCanon(env);
        },
      });
    });
  }

  it('separate worker (postgres): canon serve with CANON_WORKER=off, the `canon worker` killed and restarted', { timeout: 120_000, skip: WORKER_SKIP }, async (t) => {
    const env = envFor(await scratchFor('postgres'));
    const canon = await startCanon({ ...env, CANON_WORKER: 'off' });
    cleanups.push(() => canon.stop());
    let worker = await startWorkerProcess(env);
    cleanups.push(() => worker.stop());
    await survivesKill(t, receiver, {
      api: () => canon,
      killAndRestart: async () => {
        await sigkill(worker.child);
        worker = await startWorkerProcess(env);
      },
    });
  });
});
