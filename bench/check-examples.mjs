// The example reports of docs/check.md: `canon check` against two servers not written for it, each with --write.
//   node bench/check-examples.mjs        (expects a fresh build in dist/; installs Platformatic DB on first use)
// 1. Platformatic DB (bench/lib/platformatic.mjs: the pinned version, installed once into the system temp dir, never a
//    dependency of this project) over Canon's products table, seeded with 30 products into a fresh SQLite file.
// 2. bench/baselines/fastify-sqlite-crud.mjs: a tutorial-style Fastify + better-sqlite3 CRUD server.
// Prints each text report (no colour) to stdout; the exit codes of the checks are printed, not propagated.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { openCanonStore, seedProducts } from './lib/canon.mjs';
import { ROOT } from './lib/options.mjs';
import { installPlatformatic, PLATFORMATIC_READY_PATH, sqliteConnectionString, startPlatformatic } from './lib/platformatic.mjs';
import { childEnv, freePort, makeTempDir, runMain, startServer, stopServer, waitUntilReady } from './lib/processes.mjs';

const CLI = path.join(ROOT, 'dist/src/cli/main.js');
const PRODUCTS = 30;

/** Runs `canon check base args…`, prints its report under a heading, then how many products the server lists. */
async function check(title, base, args) {
  const argv = ['check', base, ...args];
  const run = spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 120_000 });
  console.log(`\n### ${title}\n\n$ canon ${argv.join(' ').replace(/127\.0\.0\.1:\d+/, '127.0.0.1:PORT')}   (exit ${run.status})\n`);
  console.log(run.stdout.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT'));
  if (run.status !== 0 && run.status !== 1) throw new Error(`canon check exited ${run.status}:\n${run.stderr}`);
  // Everything --write created was deleted again: the server lists the products it was seeded with, no more.
  const left = await (await fetch(`${base}/products?limit=100`)).json();
  console.log(`products listed after the check: ${left.length} (seeded: ${PRODUCTS})`);
  if (left.length !== PRODUCTS) throw new Error(`${title}: ${left.length} products after the check, ${PRODUCTS} before`);
}

async function platformatic() {
  const install = await installPlatformatic();
  const file = path.join(makeTempDir('canon-check-plt-'), 'products.db');
  const store = await openCanonStore(`sqlite:${file}`);
  await seedProducts(store, PRODUCTS);
  await store.close();
  const port = await freePort();
  const server = startPlatformatic(port, { install, connectionString: sqliteConnectionString(file), pinned: false });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(server, base, PLATFORMATIC_READY_PATH);
    await check(`Platformatic DB ${install.versions['@platformatic/db']} (REST over Canon's products table, SQLite)`, base, ['--path', '/products', '--write']);
  } finally {
    await stopServer(server);
  }
}

async function fastifyCrud() {
  const port = await freePort();
  const server = startServer(
    'fastify-sqlite-crud',
    path.join(ROOT, 'bench/baselines/fastify-sqlite-crud.mjs'),
    [],
    childEnv({ PORT: String(port), PRODUCTS: String(PRODUCTS) }),
    false,
  );
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(server, base, '/healthz');
    await check('Fastify + SQLite CRUD (bench/baselines/fastify-sqlite-crud.mjs)', base, ['--path', '/products', '--write']);
  } finally {
    await stopServer(server);
  }
}

runMain(async () => {
  await platformatic();
  await fastifyCrud();
});
