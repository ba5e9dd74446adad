// Issues 13.11 and 26.4: SQLite stores opened, used, closed and garbage-collected by the hundred, and statements evicted and released by the thousand, never abort the process (Node 24.19+ aborts when GC destroys a better-sqlite3 object; see src/store/sqlite/native-handles.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const CHILD = fileURLToPath(new URL('../../support/gc-stress.js', import.meta.url));
const RELEASES = fileURLToPath(new URL('../../support/statement-release-stress.js', import.meta.url));

describe('better-sqlite3 objects and the garbage collector', () => {
  it('750 stores opened, used and closed while serving HTTP: the process exits normally', () => {
    const result = spawnSync(process.execPath, [CHILD], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(result.signal, null, `killed by ${result.signal}:\n${result.stderr.slice(0, 2000)}`);
    assert.equal(result.status, 0, result.stderr.slice(0, 2000));
    assert.match(result.stdout, /survived/);
  });

  it('statements evicted from the bounded caches by the thousand are released while serving HTTP: destroyed, and the process exits normally (issue 26.4)', () => {
    const result = spawnSync(process.execPath, [RELEASES], { encoding: 'utf8', timeout: 120_000 });
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
