// Issue 13.11: SQLite stores opened, used, closed and garbage-collected by the hundred never abort the process (Node 24.19+ aborts when GC destroys a better-sqlite3 object; see src/store/sqlite/native-handles.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const CHILD = fileURLToPath(new URL('../../support/gc-stress.js', import.meta.url));

describe('better-sqlite3 objects and the garbage collector', () => {
  it('750 stores opened, used and closed while serving HTTP: the process exits normally', () => {
    const result = spawnSync(process.execPath, [CHILD], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(result.signal, null, `killed by ${result.signal}:\n${result.stderr.slice(0, 2000)}`);
    assert.equal(result.status, 0, result.stderr.slice(0, 2000));
    assert.match(result.stdout, /survived/);
  });
});
