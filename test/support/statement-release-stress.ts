// Child process of test/unit/store/sqlite-native-lifetime.test.ts: list shapes by the thousand through a bounded statement cache while serving HTTP, so evicted statements are released again and again while the garbage collector also runs from I/O callbacks.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileModel } from '../../src/model/compile.js';
import { withPlatform } from '../../src/runtime/compose.js';
import { commerce } from '../../examples/commerce/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { releasedCount, retainedCount } from '../../src/store/sqlite/native-handles.js';
import type { Condition } from '../../src/store/types.js';

const model = compileModel(withPlatform(commerce));
const server = createServer((req, res) => {
  // Garbage on every request: collections start from wherever allocation happens, I/O callbacks included.
  const junk = Array.from({ length: 2000 }, (_, i) => ({ i, s: `x${i}` }));
  res.end(String(junk.length));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
const dir = mkdtempSync(join(tmpdir(), 'canon-release-'));
// A file: a read connection and a write connection, each with its caches.
const store = new SqliteStore({ path: join(dir, 'release.db') });
await store.migrate(model);

// Distinct statements: a sort key and two range filters whose operators vary (7 × 7 × 4 × 2 = 392 per bound).
const ops = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in'] as const;
const sorts = ['name', 'price.amount', 'created_at', 'id'];
let shapes = 0;
for (let round = 0; round < 6; round++) {
  for (const a of ops) {
    for (const b of ops) {
      for (const sort of sorts) {
        for (const desc of [false, true]) {
          const where: Condition[] = [
            { path: 'price.amount', op: a, value: a === 'in' ? [100 + round] : 100 + round } as Condition,
            { path: 'created_at', op: b, value: b === 'in' ? ['2026-01-01T00:00:00.000Z'] : '2026-01-01T00:00:00.000Z' } as Condition,
            // The round makes each pass's statements new ones: an extra condition on another path.
            ...(round > 0 ? [{ path: 'status', op: ops[round - 1]!, value: ops[round - 1] === 'in' ? ['active'] : 'active' } as Condition] : []),
          ];
          const orderBy =
            sort === 'id'
              ? [{ path: 'id', desc }]
              : [
                  { path: sort, desc },
                  { path: 'id', desc },
                ];
          // Half through a transaction (the write connection), half as plain reads.
          if (shapes % 2) await store.transaction((tx) => tx.list('products', { where, orderBy, limit: 5 }));
          else await store.list('products', { where, orderBy, limit: 5 });
          shapes++;
        }
      }
      await Promise.all(Array.from({ length: 2 }, async () => (await fetch(url)).text()));
    }
  }
}
await store.close();
server.close();
rmSync(dir, { recursive: true, force: true });
console.log(`survived ${shapes} shapes: ${releasedCount()} statements released, ${retainedCount()} pinned`);
