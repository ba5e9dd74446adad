// Starts real `canon serve` and `canon worker` processes for multi-process tests and stops them (bounded waits, no strays).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_PROCESS_ENV } from './harness.js';
import { reapOnExit } from './reaper.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface CanonProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

/** `options.cwd`: the working directory (where `canon` looks for its configuration file); this process's by default. */
export async function startCanon(env: Record<string, string>, args: string[] = [], options: { cwd?: string } = {}): Promise<CanonProcess> {
  const child = reapOnExit(
    spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      // Limits off unless a test sets them: these suites send hundreds of requests with one key. The event-loop
      // overload check off too: a loaded machine must not turn requests into 503s (harness.ts, TEST_OVERLOAD).
      env: { ...process.env, CANON_LOG_LEVEL: 'warn', CANON_SEED: '0', CANON_RATE_LIMIT: 'off', ...TEST_PROCESS_ENV, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`canon did not start in 20 s:\n${output}`)), 20_000);
    const onData = (d: Buffer): void => {
      output += d.toString();
      const m = /serving (http:\/\/[^/\s]+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`canon exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
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

export interface WorkerProcess {
  child: ChildProcess;
  /** Where its operator server listens (`--port`), if it has one. */
  url: string | undefined;
  /** Everything it printed so far. */
  output(): string;
  /** SIGTERM, then waits for the exit (SIGKILL after 15 s); resolves with how it exited and how long that took. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

/** Starts `canon worker` with `args` (`--port 0` for an operator server), once it says it is running. */
export async function startCanonWorker(env: Record<string, string>, args: string[] = []): Promise<WorkerProcess> {
  const child = reapOnExit(
    spawn(process.execPath, [CLI, 'worker', ...args], {
      // The worker's operator server shares the API's overload guard: off here too (TEST_PROCESS_ENV).
      env: { ...process.env, CANON_LOG_LEVEL: 'warn', CANON_SEED: '0', CANON_RATE_LIMIT: 'off', ...TEST_PROCESS_ENV, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string | undefined>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`canon worker did not start in 20 s:\n${output}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      // The second line names the operator server, or says there is none.
      const m = /worker running[^\n]*\n\s+(?:health: (http:\/\/[^/\s]+)|no HTTP server)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`canon worker exited with ${code}:\n${output}`));
    });
  });
  return {
    child,
    url,
    output: () => output,
    stop: async () => {
      const started = Date.now();
      if (child.exitCode === null && child.signalCode === null) {
        const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.kill('SIGTERM');
        await exited;
        clearTimeout(kill);
      }
      return { ...(await exited), ms: Date.now() - started };
    },
  };
}
