// Child process of test/store/sqlite-native-lifetime.test.ts: opens and closes SQLite stores by the hundred while serving HTTP, so the garbage collector runs from I/O callbacks too.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileModel } from '../../src/model/compile.js';
import { withPlatform } from '../../src/runtime/compose.js';
import { commerce } from '../../examples/commerce/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const model = compileModel(withPlatform(commerce));
const server = createServer((req, res) => {
  // Garbage on every request: collections start from wherever allocation happens, I/O callbacks included.
  const junk = Array.from({ length: 2000 }, (_, i) => ({ i, s: `x${i}` }));
  res.end(String(junk.length));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

for (let round = 0; round < 150; round++) {
  for (let i = 0; i < 5; i++) {
    const store = new SqliteStore({ path: ':memory:' });
    await store.migrate(model);
    await store.list('products', { where: [{ path: 'status', op: 'eq', value: 'active' }], orderBy: [{ path: 'id', desc: false }], limit: 5 });
    await store.close();
  }
  await Promise.all(Array.from({ length: 20 }, async () => (await fetch(url)).text()));
}
server.close();
console.log('survived');
