// Starts real `canon serve` processes for multi-process tests and stops them (bounded waits, no strays).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_PROCESS_ENV } from './harness.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface CanonProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `options.cwd`: the working directory (where `canon` looks for its configuration file); this process's by default. */
export async function startCanon(env: Record<string, string>, args: string[] = [], options: { cwd?: string } = {}): Promise<CanonProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    // Limits off unless a test sets them: these suites send hundreds of requests with one key. The event-loop
    // overload check off too: a loaded machine must not turn requests into 503s (harness.ts, TEST_OVERLOAD).
    env: { ...process.env, CANON_LOG_LEVEL: 'warn', CANON_SEED: '0', CANON_RATE_LIMIT: 'off', ...TEST_PROCESS_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
