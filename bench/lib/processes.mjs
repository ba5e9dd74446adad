// Child servers (pinned with taskset), bounded readiness waits, HTTP helpers, and clean-up on exit, errors and signals.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { READY_TIMEOUT_MS, ROOT, SERVER_CORE } from './options.mjs';

// ---------------------------------------------------------------------------------------------------
// Clean-up: every child and temp dir is tracked; asynchronous clean-ups (dropping a database) run
// after the children are gone, each bounded in time. On exit only the synchronous part can run.

const children = new Set();
const tempDirs = new Set();
const cleanups = [];
const CLEANUP_TIMEOUT_MS = 15_000;

function killChildrenNow() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
}

function removeTempDirsNow() {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Registers an asynchronous clean-up (run once, newest first, by runCleanups). */
export function onCleanup(fn) {
  cleanups.push(fn);
}

export async function runCleanups() {
  killChildrenNow();
  while (cleanups.length > 0) {
    const fn = cleanups.pop();
    try {
      await Promise.race([
        fn(),
        sleep(CLEANUP_TIMEOUT_MS, null, { ref: false }).then(() => {
          throw new Error(`timed out after ${CLEANUP_TIMEOUT_MS / 1000} s`);
        }),
      ]);
    } catch (err) {
      console.error(`bench: clean-up failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  removeTempDirsNow();
}

export function makeTempDir(prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

process.on('exit', () => {
  killChildrenNow();
  removeTempDirsNow();
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    console.error(`\nbench: received ${signal}, stopping the servers`);
    runCleanups().finally(() => process.exit(130));
  });
}

/** Runs a script's main(): failures are printed and set the exit code; clean-up always runs. */
export function runMain(main) {
  main()
    .catch((err) => {
      console.error(`\nbench: FAILED: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    })
    .finally(runCleanups);
}

// ---------------------------------------------------------------------------------------------------
// Servers.

export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

export function childEnv(extra) {
  const env = { ...process.env, ...extra };
  delete env.NODE_ENV; // production mode would require CANON_SECRET and disable the demo seed
  delete env.NODE_OPTIONS; // keep inspector/profiler flags meant for this process away from the servers
  return env;
}

/** Starts `node [nodeArgs] script [args]`, under `taskset -c core` (SERVER_CORE by default) when pinned; its output is kept (last 8 KiB). */
export function startServer(name, script, args, env, pinned, nodeArgs = [], core = SERVER_CORE) {
  const command = pinned ? 'taskset' : process.execPath;
  const argv = pinned ? ['-c', core, process.execPath, ...nodeArgs, script, ...args] : [...nodeArgs, script, ...args];
  const child = spawn(command, argv, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-8192);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.once('error', (err) => {
    keep(`\n[spawn error] ${err.message}\n`);
    children.delete(child); // a child that could not be spawned counts as exited
  });
  const exited = new Promise((resolve) => {
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return { name, child, exited, output: () => output, command: [command, ...argv].join(' ') };
}

export function hasExited(server) {
  return server.child.exitCode !== null || server.child.signalCode !== null || !children.has(server.child);
}

export function assertAlive(server, when) {
  if (hasExited(server)) {
    throw new Error(`${server.name} died ${when} (exit code ${server.child.exitCode}, signal ${server.child.signalCode}).\n--- its output ---\n${server.output()}`);
  }
}

export async function stopServer(server) {
  if (hasExited(server)) return;
  server.child.kill('SIGTERM');
  const graceful = await Promise.race([server.exited, sleep(10_000, null, { ref: false })]);
  if (graceful === null) {
    server.child.kill('SIGKILL');
    await Promise.race([server.exited, sleep(2000, null, { ref: false })]);
  }
}

/** One request over a fresh connection (or `agent`'s), bounded in time; resolves with status, headers and body text. */
export function request(method, url, { headers = {}, body, timeoutMs = 2000, agent = false } = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const allHeaders = payload ? { 'content-type': 'application/json', 'content-length': String(payload.length), ...headers } : headers;
    const req = http.request(url, { method, headers: allHeaders, agent, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error(`${method} ${url}: no answer within ${timeoutMs} ms`)));
    req.once('error', reject);
    req.end(payload);
  });
}

export function get(url, headers = {}, timeoutMs = 2000) {
  return request('GET', url, { headers, timeoutMs });
}

/** GET that must answer `status` with JSON; returns the parsed body and the raw response. */
export async function getJson(url, headers = {}, { status = 200, timeoutMs = 5000 } = {}) {
  const res = await get(url, headers, timeoutMs);
  if (res.status !== status) throw new Error(`GET ${url} answered ${res.status}, expected ${status}: ${res.body.slice(0, 500)}`);
  return { json: JSON.parse(res.body), res };
}

/** Polls `base + path` until it answers 200: bounded by a deadline and by an attempt count. */
export async function waitUntilReady(server, base, readyPath = '/healthz', timeoutMs = READY_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no attempt made';
  const maxAttempts = Math.ceil(timeoutMs / 100) + 100;
  for (let attempt = 0; attempt < maxAttempts && Date.now() < deadline; attempt++) {
    assertAlive(server, `before answering ${readyPath}`);
    try {
      const res = await get(`${base}${readyPath}`, {}, Math.max(100, Math.min(5000, deadline - Date.now())));
      if (res.status === 200) return;
      lastError = `HTTP ${res.status}`;
    } catch (err) {
      lastError = err.message;
    }
    await sleep(100);
  }
  throw new Error(`${server.name} did not answer ${base}${readyPath} with 200 within ${timeoutMs / 1000} s (last error: ${lastError}).\n--- its output ---\n${server.output()}`);
}

/** Starts a server on a free port, waits for it, runs `fn(server, base)`, and always stops it. */
export async function withServer(start, fn, { readyPath = '/healthz', readyTimeoutMs = READY_TIMEOUT_MS } = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = start(port);
  try {
    await waitUntilReady(server, base, readyPath, readyTimeoutMs);
    return await fn(server, base);
  } finally {
    await stopServer(server);
  }
}

/**
 * Starts servers one by one (each on a free port, each waited for on its `readyPath`, /healthz by default), runs
 * `fn(handles)` with `{ [key]: { server, base, config } }`, and always stops them all. `specs`: [{ key, start(port), readyPath? }].
 */
export async function startServers(specs, fn, readyTimeoutMs = READY_TIMEOUT_MS) {
  const running = [];
  const handles = {};
  try {
    for (const spec of specs) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const server = spec.start(port);
      running.push(server);
      await waitUntilReady(server, base, spec.readyPath ?? '/healthz', readyTimeoutMs);
      handles[spec.key] = { server, base, config: server.config };
    }
    return await fn(handles);
  } finally {
    for (const server of running.reverse()) await stopServer(server);
  }
}
