// Counters on Redis are exact across processes: 2 processes × 500 concurrent consumptions of a limit of 300 grant 300.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { REDIS_SKIP, REDIS_URL, runPrefix } from '../support/redis.js';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./consume-worker.js', import.meta.url));

describe('redis counters across processes', { skip: REDIS_SKIP }, () => {
  for (const kind of ['bucket', 'window']) {
    it(`${kind}: exactly 300 of 1000 granted`, async () => {
      const prefix = runPrefix();
      const both = await Promise.all([0, 1].map(() => run(process.execPath, [worker, REDIS_URL!, prefix, 'shared', kind, '300', '500'], { timeout: 30_000 })));
      const granted = both.map((r) => Number(r.stdout));
      assert.equal(granted[0]! + granted[1]!, 300, `granted ${granted.join(' + ')}`);
    });
  }
});
