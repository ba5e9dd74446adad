// README.md's tour run as its reader runs it (issue 26.15): its sh blocks as one bash script with curl and openssl, against a fresh `canon serve` (what npm start runs once dist/ is built), the webhook section's restart included; every answer a comment shows is checked.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { ERROR_CATALOG } from '../../src/errors/catalog.js';
import { TEST_PROCESS_ENV } from '../support/harness.js';
import { reapOnExit } from '../support/reaper.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The tour's sh blocks: the tour itself, then the webhook section's three (receiver certificate, server restart, receiver and deliveries). */
function tourBlocks(): string[] {
  const start = README.indexOf('## A tour with curl');
  const end = README.indexOf('\n## ', start + 1);
  assert.ok(start >= 0 && end > start, 'README.md has its tour section');
  return [...README.slice(start, end).matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

function available(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

/** Whether `port` can be listened on at 127.0.0.1 now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The lowest port the kernel hands to outgoing connections (Linux: /proc/sys/net/ipv4/ip_local_port_range; else 32768). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A free port below the kernel's ephemeral range. The webhook receiver listens on its port some 40 s after it is
 * chosen, while other test files run beside this one: a port the kernel picked (listen on 0) is in that range, and
 * an outgoing connection of another test could take it in between (seen once in CI: EADDRINUSE).
 */
async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await canListen(port)) return port;
  }
  throw new Error('no free port found below the ephemeral range in 100 tries');
}

/** The environment a reader's shell has: none of this process's Canon settings, npm's variables or test settings. */
function readerEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const keep = Object.entries(process.env).filter(([k]) => !/^(CANON_|npm_|DATABASE_URL$|REDIS_URL$|PORT$|HOST$|NODE_ENV$|NODE_EXTRA_CA_CERTS$)/i.test(k));
  return { ...Object.fromEntries(keep), ...extra };
}

/** The index of the first ` #` outside quotes: where a line's comment starts, or -1. */
function commentStart(line: string): number {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return i;
  }
  return -1;
}

interface Check {
  what: string;
  test(output: string): boolean;
}

/** What a command's comment says its answer holds: a leading status, `"key":value` pairs, error codes, `Header-Name: value`. */
function checksOf(comment: string): Check[] {
  const checks: Check[] = [];
  const status = /^(\d{3})\b/.exec(comment);
  if (status) checks.push({ what: `status ${status[1]}`, test: (out) => new RegExp(`^HTTP/[\\d.]+ ${status[1]}\\b`, 'm').test(out) });
  for (const [fragment] of comment.matchAll(/"[a-z_]+":(?:"[^"…]*"|-?\d+(?:\.\d+)?|true|false|null|\[\])/g)) checks.push({ what: fragment, test: (out) => out.includes(fragment) });
  for (const [word] of comment.matchAll(/\b[A-Z][A-Z_]+\b/g)) {
    if (word in ERROR_CATALOG) checks.push({ what: `code ${word}`, test: (out) => out.includes(`"code":"${word}"`) });
  }
  for (const [, name, value] of comment.matchAll(/\b([A-Z][a-z]+(?:-[A-Z][a-z]+)+): ([^\s,;…]+)/g)) {
    const header = `${name!.toLowerCase()}: ${value!.toLowerCase()}`;
    checks.push({ what: `header ${name}: ${value}`, test: (out) => out.toLowerCase().includes(header) });
  }
  return checks;
}

class Server {
  child: ChildProcess | undefined;
  output = '';

  async start(cwd: string, port: number, env: Record<string, string>): Promise<void> {
    this.output = '';
    // The event-loop overload check off, as for every process a test starts (TEST_PROCESS_ENV): on a loaded CI machine it
    // answered the tour's first requests with 503. Nothing the tour shows depends on it.
    const serverEnv = readerEnv({ CANON_MAX_EVENT_LOOP_DELAY_MS: TEST_PROCESS_ENV.CANON_MAX_EVENT_LOOP_DELAY_MS!, ...env });
    const child = reapOnExit(spawn(process.execPath, [CLI, 'serve', '--port', String(port)], { cwd, env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] }));
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      // Generous: the first start seeds demo users, each password hashed at the production cost.
      const timer = setTimeout(() => reject(new Error(`canon did not start in 60 s:\n${this.output}`)), 60_000);
      child.stdout!.on('data', (d: Buffer) => {
        this.output += d.toString();
        if (/development admin API key: ck_\S+\n/.test(this.output)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`canon exited with ${code}:\n${this.output}`));
      });
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
}

describe("README.md's tour with curl", () => {
  const missing = ['bash', 'curl', 'openssl'].filter((c) => !available(c, c === 'openssl' ? ['version'] : ['--version']));
  let dir = '';
  const server = new Server();
  let bash: ChildProcess | undefined;

  after(async () => {
    // The tour's background jobs (the stream, the receiver) are in bash's process group, and outlive bash when a
    // line fails before the one that stops them: the group is killed whether bash is still running or not.
    if (bash?.pid) {
      try {
        process.kill(-bash.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await server.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs as one script against a fresh server and answers as its comments say', { skip: missing.length ? `needs ${missing.join(', ')}` : false }, async (t) => {
    const blocks = tourBlocks();
    assert.equal(blocks.length, 4, 'the tour, then the webhook section: certificate, restart, receiver');
    const [tour, certificate, restart, receiver] = blocks as [string, string, string, string];
    const restartLine = /^((?:\w+=\S+ )+)npm start\n$/.exec(restart);
    assert.ok(restartLine, `the webhook section restarts the server with settings before npm start: ${restart}`);

    dir = mkdtempSync(join(tmpdir(), 'canon-readme-'));
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const port = await freePort();
    const receiverPort = await freePort();
    await server.start(dir, port, {});

    // One script, README lines kept one to one after a header, so bash's $LINENO names the README line.
    const header = ['set -e', `trap 'printf "\\n@@L %s\\n" "$LINENO"' DEBUG`];
    const pause = ['printf "\\n@@RESTART\\n"; read -r _'];
    const text = (block: string): string[] => block.replace(/\n$/, '').replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`).replaceAll('8443', String(receiverPort)).split('\n');
    const lines = [...header, ...text(tour), ...text(certificate), ...pause, ...text(receiver)];
    const fromReadme = new Set<number>();
    for (let n = header.length + 1; n <= lines.length; n++) if (!pause.includes(lines[n - 1]!)) fromReadme.add(n);
    writeFileSync(join(dir, 'tour.sh'), lines.join('\n') + '\n');

    const env = readerEnv({ TMPDIR: tmp });
    let stdout = '';
    let stderr = '';
    const child = reapOnExit(spawn('bash', ['tour.sh'], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true }));
    bash = child;
    const status = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the tour did not finish in 150 s:\n${stdout.slice(-4000)}\n${stderr}`)), 150_000);
      child.stdout!.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes('\n@@RESTART\n') && !stdout.includes('@@RESTARTED')) {
          stdout += '@@RESTARTED';
          // As the README says: stop the server and start it again with the settings it shows (the data stays).
          const settings: Record<string, string> = {};
          for (const [, name, value] of restartLine[1]!.matchAll(/(\w+)=(\S+) /g)) {
            settings[name!] = value!.replace(/\$\{(\w+):-([^}]*)\}/g, (_m, v: string, fallback: string) => env[v] || fallback);
          }
          void server
            .stop()
            .then(() => server.start(dir, port, settings))
            .then(() => child.stdin!.write('\n'), reject);
        }
      });
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    assert.equal(status, 0, `the tour failed (exit ${status}):\n${stderr}\n--- last output:\n${stdout.slice(-3000)}\n--- server:\n${server.output}`);

    // What each script line printed: bash's DEBUG trap marks the line of every command before it runs.
    const printed = new Map<number, string>();
    const parts = stdout.replace('@@RESTARTED', '').split(/\n@@L (\d+)\n/);
    for (let k = 1; k < parts.length; k += 2) {
      const n = Number(parts[k]);
      printed.set(n, (printed.get(n) ?? '') + parts[k + 1]!);
    }
    const ran = [...printed.keys()].sort((a, b) => a - b);
    let checked = 0;
    const failures: string[] = [];
    for (const n of fromReadme) {
      const line = lines[n - 1]!;
      const at = commentStart(line);
      if (at <= 0 || line.slice(0, at).trim() === '') continue;
      const checks = checksOf(line.slice(at + 1).trim());
      if (checks.length === 0) continue;
      // A command spanning lines is marked at its first line (after a backslash) or its last (in quotes).
      const start = ran.filter((m) => m <= n).at(-1);
      const output = start === undefined ? undefined : printed.get(start);
      if (output === undefined) {
        failures.push(`never ran: ${line}`);
        continue;
      }
      for (const check of checks) {
        checked++;
        if (!check.test(output)) failures.push(`${line}\n  expected ${check.what} in:\n  ${output.slice(0, 1500).replace(/\n/g, '\n  ')}`);
      }
    }
    assert.deepEqual(failures, [], failures.join('\n\n'));
    assert.ok(checked >= 30, `the tour's comments were checked (${checked} checks)`);
    t.diagnostic(`${checked} answers checked`);
  });
});
