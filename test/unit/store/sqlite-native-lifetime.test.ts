// Issues 13.11 and 26.4: SQLite stores opened, used, closed and garbage-collected by the hundred, and statements evicted and released by the thousand, never abort the process (Node 24.19+ aborts when GC destroys a better-sqlite3 object; see src/store/sqlite/native-handles.ts).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const CHILD = fileURLToPath(new URL('../../support/gc-stress.js', import.meta.url));
const RELEASES = fileURLToPath(new URL('../../support/statement-release-stress.js', import.meta.url));

/** Runs a compiled support script in its own Node process, SIGTERMed after `timeoutMs` (as spawnSync's `timeout` did), without blocking the file's other test. */
function runNode(script: string, timeoutMs: number): Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

// The two children at once (`concurrency`): each is one process busy on one core, independent of the other, and
// the file runs near the suite's end, when cores are free (one after the other it took 48 s there).
describe('better-sqlite3 objects and the garbage collector', { concurrency: true }, () => {
  it('750 stores opened, used and closed while serving HTTP: the process exits normally', async () => {
    const result = await runNode(CHILD, 120_000);
    assert.equal(result.signal, null, `killed by ${result.signal}:\n${result.stderr.slice(0, 2000)}`);
    assert.equal(result.status, 0, result.stderr.slice(0, 2000));
    assert.match(result.stdout, /survived/);
  });

  it('statements evicted from the bounded caches by the thousand are released while serving HTTP: destroyed, and the process exits normally (issue 26.4)', async () => {
    const result = await runNode(RELEASES, 120_000);
    assert.equal(result.signal, null, `killed by ${result.signal}:\n${result.stderr.slice(0, 2000)}`);
    assert.equal(result.status, 0, result.stderr.slice(0, 2000));
    const m = /survived (\d+) shapes: (\d+) statements released, (\d+) pinned/.exec(result.stdout);
    assert.ok(m, result.stdout);
    const [shapes, released, pinned] = m.slice(1).map(Number) as [number, number, number];
    assert.equal(shapes, 6 * 392);
    // Over a thousand of the 2,352 list statements were evicted (the caches hold 512 per connection), and a release takes 512.
    assert.ok(released >= 512, `${released} released`);
    assert.ok(pinned < 2_000, `${pinned} pinned`);
  });
});
