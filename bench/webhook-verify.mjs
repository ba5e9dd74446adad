#!/usr/bin/env node
// Benchmark (issue 28): canon-client's verifyWebhook on a 1 KiB delivery, verifications per second, against the official standardwebhooks library in the same run.
//
//   node scripts/build.mjs && node bench/webhook-verify.mjs
//
// What is measured: the package as built (packages/client/dist), verifying one signed Standard Webhooks delivery
// whose body is exactly 1,024 bytes of event JSON, signed with a 32-byte whsec_ secret, every call checking the
// headers, the timestamp window, the HMAC-SHA256 and parsing the body.
//   - verifyWebhook as Node loads the package (dist/node.js: HMAC by node:crypto), sequential: one verification
//     awaited before the next (the latency of one call), and concurrent: BENCH_CONCURRENCY (default 64) in flight,
//     as a receiver under load has;
//   - verifyWebhook with the portable entry's Web Crypto HMAC, concurrent (on Node 20 every Web Crypto HMAC
//     goes through libuv's thread pool, which is why Node gets node:crypto);
//   - the bare Web Crypto HMAC of the same content, as many in flight: the platform's ceiling for any Web Crypto verifier;
//   - standardwebhooks' Webhook.verify (pure-JS HMAC, synchronous), the baseline.
// The modes run in alternating slices (A B C D D C B A …, BENCH_SLICES per mode, default 10, of BENCH_SLICE_MS,
// default 500) so that drift of a shared machine weighs on each alike; each mode's figure is its total
// verifications over its total time. CPU seconds of this process per verification are reported beside.
// The target (issue 28, Performance): verifyWebhook >= 50,000 verifications/s, judged on the concurrent figure.
// Results go to bench/results/webhook-verify.json.
import { Buffer } from 'node:buffer';
import { randomBytes, webcrypto } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
// The package as Node loads it (package.json exports, condition "node": HMAC by node:crypto), and the two HMACs.
import { verifyWebhook } from '../packages/client/dist/node.js';
import { useHmac, webCryptoHmac } from '../packages/client/dist/webhooks/hmac.js';
import { nodeHmac } from '../packages/client/dist/webhooks/hmac-node.js';
import { fmt, intFromEnv, RESULTS_DIR } from './lib/options.mjs';
import { machine, packageVersion, sourceVersion, writeResults } from './lib/report.mjs';

const SLICES = intFromEnv('BENCH_SLICES', 10, 1, 100);
const SLICE_MS = intFromEnv('BENCH_SLICE_MS', 500, 50, 60_000);
const CONCURRENCY = intFromEnv('BENCH_CONCURRENCY', 64, 2, 10_000);
const WARMUP_MS = intFromEnv('BENCH_WARMUP_MS', 1_000, 0, 60_000);
const BODY_BYTES = 1024;
const TARGET = 50_000;
const RESULTS_FILE = path.join(RESULTS_DIR, 'webhook-verify.json');

/** An event whose JSON is exactly `bytes` long (ASCII, so characters are bytes), padded in its description. */
function eventBody(bytes) {
  const event = {
    id: '01a21de4-20a0-7668-8466-89f6021d5aa2',
    type: 'product.updated',
    sequence: 123456,
    created_at: '2026-03-01T12:00:00.000Z',
    api_version: '2026-03-01',
    data: { object: { id: '01a21de4-20a0-7668-8466-84326fca3254', name: 'Hand grinder', description: '', price: { amount: 4900, currency: 'EUR' }, status: 'active' } },
  };
  const bare = JSON.stringify(event).length;
  if (bare > bytes) throw new Error(`the event is already ${bare} bytes`);
  event.data.object.description = 'x'.repeat(bytes - bare);
  const text = JSON.stringify(event);
  if (Buffer.byteLength(text) !== bytes) throw new Error(`body is ${Buffer.byteLength(text)} bytes, not ${bytes}`);
  return text;
}

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const body = eventBody(BODY_BYTES);
const id = 'msg_2Lf7b7cM3DqL7YcT';
/** Signed now, so the whole run stays inside the ±5 minute window. */
const signedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
const headers = { 'webhook-id': id, 'webhook-timestamp': String(signedAt.getTime() / 1000), 'webhook-signature': new Webhook(secret).sign(id, signedAt, body) };
const official = new Webhook(secret);
const content = Buffer.from(`${id}.${headers['webhook-timestamp']}.${body}`, 'utf8');
const rawKey = await webcrypto.subtle.importKey('raw', Buffer.from(secret.slice('whsec_'.length), 'base64'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);

/** BENCH_CONCURRENCY verifications in flight for `ms`, with `impl` as the HMAC; how many completed. */
async function inFlight(ms, impl) {
  useHmac(impl);
  const end = performance.now() + ms;
  let n = 0;
  const lane = async () => {
    while (performance.now() < end) {
      await verifyWebhook({ secret, headers, body });
      n++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return n;
}

/** Each mode runs for `ms` and returns how many verifications it completed. */
const modes = {
  sequential: async (ms) => {
    useHmac(nodeHmac);
    const end = performance.now() + ms;
    let n = 0;
    while (performance.now() < end) {
      await verifyWebhook({ secret, headers, body });
      n++;
    }
    return n;
  },
  concurrent: (ms) => inFlight(ms, nodeHmac),
  // The portable entry's HMAC (browsers; Node when the "default" export is loaded), as many in flight.
  'concurrent-webcrypto': (ms) => inFlight(ms, webCryptoHmac),
  // The platform's floor: the bare Web Crypto HMAC of the same signed content, as many in flight, nothing else.
  'webcrypto-hmac': async (ms) => {
    const end = performance.now() + ms;
    let n = 0;
    const lane = async () => {
      while (performance.now() < end) {
        await webcrypto.subtle.sign('HMAC', rawKey, content);
        n++;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
    return n;
  },
  standardwebhooks: async (ms) => {
    const end = performance.now() + ms;
    let n = 0;
    // Synchronous: checked against the clock every 64 calls; yields to the event loop between slices only.
    while (performance.now() < end) {
      for (let i = 0; i < 64; i++) official.verify(body, headers);
      n += 64;
    }
    return n;
  },
};
const names = Object.keys(modes);

async function main() {
  // Correctness first: both verify this delivery to the same event, and both refuse a tampered body.
  useHmac(nodeHmac);
  const ours = await verifyWebhook({ secret, headers, body });
  const theirs = official.verify(body, headers);
  if (JSON.stringify(ours) !== JSON.stringify(theirs) || JSON.stringify(ours) !== body) throw new Error('the two verifiers disagree on the delivery');
  const tampered = body.replace('Hand grinder', 'Hand grindes');
  if (
    await verifyWebhook({ secret, headers, body: tampered }).then(
      () => true,
      () => false,
    )
  )
    throw new Error('verifyWebhook accepted a tampered body');

  console.log(
    `bench: verifyWebhook (canon-client, packages/client/dist) vs standardwebhooks ${packageVersion('standardwebhooks')} | ${BODY_BYTES}-byte body | node ${process.version} | ` +
      `${machine().cores} cores (${machine().cpuModel}), load average ${os.loadavg()[0].toFixed(2)} | ${SLICES} slices of ${SLICE_MS} ms per mode, interleaved | concurrency ${CONCURRENCY}`,
  );
  for (const name of names) await modes[name](WARMUP_MS / names.length);

  const totals = Object.fromEntries(names.map((n) => [n, { count: 0, ms: 0, cpuMicros: 0, slices: [] }]));
  for (let s = 0; s < SLICES; s++) {
    // A B C D, then D C B A: a drift linear over the pair weighs on every mode alike.
    const order = s % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      const count = await modes[name](SLICE_MS);
      const ms = performance.now() - t0;
      const used = process.cpuUsage(cpu);
      const t = totals[name];
      t.count += count;
      t.ms += ms;
      t.cpuMicros += used.user + used.system;
      t.slices.push(Math.round((count / ms) * 1000));
    }
  }

  const rate = (name) => (totals[name].count / totals[name].ms) * 1000;
  const results = Object.fromEntries(
    names.map((name) => [
      name,
      {
        verificationsPerSecond: Math.round(rate(name)),
        microsecondsPerVerification: Number(((totals[name].ms * 1000) / totals[name].count).toFixed(2)),
        cpuMicrosecondsPerVerification: Number((totals[name].cpuMicros / totals[name].count).toFixed(2)),
        perSlice: totals[name].slices,
      },
    ]),
  );
  for (const name of names) {
    const r = results[name];
    console.log(
      `${name.padEnd(18)} ${fmt(r.verificationsPerSecond).padStart(9)} verifications/s  ${fmt(r.microsecondsPerVerification, 1).padStart(6)} µs each  ${fmt(r.cpuMicrosecondsPerVerification, 1).padStart(6)} CPU µs each`,
    );
  }
  const ratios = {
    sequentialOverStandardwebhooks: Number((rate('sequential') / rate('standardwebhooks')).toFixed(3)),
    concurrentOverStandardwebhooks: Number((rate('concurrent') / rate('standardwebhooks')).toFixed(3)),
    concurrentOverBareHmac: Number((rate('concurrent') / rate('webcrypto-hmac')).toFixed(3)),
    webCryptoOverStandardwebhooks: Number((rate('concurrent-webcrypto') / rate('standardwebhooks')).toFixed(3)),
  };
  const met = rate('concurrent') >= TARGET;
  console.log(`ratio to standardwebhooks: sequential ${fmt(ratios.sequentialOverStandardwebhooks, 2)}x, concurrent ${fmt(ratios.concurrentOverStandardwebhooks, 2)}x`);
  console.log(`verifyWebhook with Web Crypto / standardwebhooks: ${fmt(ratios.webCryptoOverStandardwebhooks, 2)}x`);
  console.log(`target: verifyWebhook >= ${fmt(TARGET)} verifications/s (concurrent): ${fmt(rate('concurrent'))} — ${met ? 'MET' : 'NOT MET'}`);
  writeResults(RESULTS_FILE, {
    benchmark: 'webhook-verify',
    date: new Date().toISOString(),
    machine: machine(),
    source: sourceVersion(),
    method: {
      bodyBytes: BODY_BYTES,
      secretBytes: 32,
      slices: SLICES,
      sliceMs: SLICE_MS,
      concurrency: CONCURRENCY,
      warmupMs: WARMUP_MS,
      standardwebhooks: packageVersion('standardwebhooks'),
    },
    results,
    ratios,
    target: { verificationsPerSecond: TARGET, judgedOn: 'concurrent', met },
  });
}

await main();
