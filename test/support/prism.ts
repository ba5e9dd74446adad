// Starts a Stoplight Prism proxy (@stoplight/prism-cli, a validator we did not write) in front of a Canon server, and stops it (bounded waits, no strays).
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createConnection, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { reapOnExit } from './reaper.js';

/** The CLI's entry point, resolved from the installed package (its `bin`), run with this Node. */
const PRISM_CLI = join(dirname(createRequire(import.meta.url).resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js');
/** Prism dereferences the whole document before it listens: seconds of CPU for ours, many more on a loaded machine. */
const START_TIMEOUT_MS = 120_000;

export interface PrismProxy {
  /** `http://127.0.0.1:port`. */
  url: string;
  /** Everything it printed so far (warnings and errors: each violation is logged too). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * `prism proxy <document> <upstream>` on a free loopback port. With `errors`, a response that violates the
 * document becomes Prism's own 500 problem (and a request that violates it, Prism's 422 or 401, never
 * forwarded); without, the request is forwarded and answered as is. Either way every violation, of the
 * request or of the response, is listed in the `sl-violations` header of the answer.
 */
export async function startPrism(document: string, upstream: string, options: { errors: boolean }): Promise<PrismProxy> {
  // A port taken between our probe and Prism's listen makes Prism exit: try another (three times at most).
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort(), document, upstream, options);
    } catch (err) {
      if (attempt >= 3 || !/EADDRINUSE/.test(String(err))) throw err;
    }
  }
}

async function startOn(port: number, document: string, upstream: string, options: { errors: boolean }): Promise<PrismProxy> {
  // Logging at warn: per-request info lines cost Prism more CPU than the validation; violations are warnings or errors.
  const args = [PRISM_CLI, 'proxy', document, upstream, '--host', '127.0.0.1', '--port', String(port), '--verboseLevel', 'warn', ...(options.errors ? ['--errors'] : [])];
  const child = reapOnExit(spawn(process.execPath, args, { env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] }));
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.kill('SIGTERM');
    await exited;
    clearTimeout(kill);
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  // Bounded: one probe per 100 ms until the deadline.
  for (let i = 0; i < START_TIMEOUT_MS / 100; i++) {
    if (exitedAlready(child)) throw new Error(`prism exited with ${child.exitCode}:\n${output.slice(-4000)}`);
    if (await accepts(port)) return { url: `http://127.0.0.1:${port}`, output: () => output, stop };
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`prism did not listen within ${START_TIMEOUT_MS / 1000} s:\n${output.slice(-4000)}`);
}

function exitedAlready(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
