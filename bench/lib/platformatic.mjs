// Platformatic DB as a peer baseline: a pinned version installed once into a cache directory under the system temp dir
// (never a dependency of this project), its configuration, and its start on the server core.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childEnv, makeTempDir, startServer } from './processes.mjs';

/** The version measured: issue 17's figures were taken with 2.61; 2.61.0 is the last 2.x release (3.x needs Node >= 22.19). */
export const PLATFORMATIC_VERSION = process.env.BENCH_PLATFORMATIC_VERSION || '2.61.0';
const INSTALL_TIMEOUT_MS = 15 * 60_000;
const INSTALLED_MARKER = '.canon-bench-installed';

/** Where `version` is installed: kept between runs so that a repeat does not reinstall. */
export function installDirOf(version = PLATFORMATIC_VERSION) {
  return path.join(os.tmpdir(), `canon-bench-platformatic-${version}`);
}

function readVersion(dir, pkg) {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** Runs `npm install --prefix dir @platformatic/db@version`, bounded in time; its output is kept (last 8 KiB) for errors. */
function npmInstall(dir, version) {
  return new Promise((resolve, reject) => {
    const args = ['install', '--prefix', dir, '--save-exact', '--no-audit', '--no-fund', '--loglevel=error', `@platformatic/db@${version}`];
    const child = spawn('npm', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk) => {
      output = (output + chunk.toString()).slice(-8192);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), INSTALL_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`npm could not be started: ${err.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`npm ${args.join(' ')} failed (exit ${code}, signal ${signal}; ${INSTALL_TIMEOUT_MS / 60_000} min limit):\n${output}`));
    });
  });
}

/**
 * Installs Platformatic DB `version` into installDirOf(version) unless a complete install of that exact version is
 * there already (a marker file is written only after npm succeeded). Returns the CLI entry and the versions found.
 */
export async function installPlatformatic(version = PLATFORMATIC_VERSION) {
  if (!/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`the Platformatic DB version must be exact (x.y.z), got "${version}"`);
  const dir = installDirOf(version);
  const entry = path.join(dir, 'node_modules/@platformatic/db/db.mjs');
  const marker = path.join(dir, INSTALLED_MARKER);
  let cached = existsSync(marker) && existsSync(entry) && readVersion(dir, '@platformatic/db') === version;
  if (!cached) {
    console.log(`bench: installing @platformatic/db@${version} into ${dir} (once; later runs reuse it) ...`);
    const started = Date.now();
    rmSync(marker, { force: true });
    mkdirSync(dir, { recursive: true });
    // A package.json of its own, so that npm installs here and never walks up to a project.
    writeFileSync(
      path.join(dir, 'package.json'),
      `${JSON.stringify({ name: 'canon-bench-platformatic', private: true, description: 'Scratch install for bench/platformatic.mjs' }, null, 2)}\n`,
    );
    await npmInstall(dir, version);
    const found = readVersion(dir, '@platformatic/db');
    if (found !== version || !existsSync(entry)) throw new Error(`after npm install, ${dir} holds @platformatic/db ${found ?? 'nothing'}, expected ${version}`);
    writeFileSync(marker, `${new Date().toISOString()}\n`);
    console.log(`bench: installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    cached = false;
  }
  return {
    dir,
    entry,
    cached,
    versions: {
      '@platformatic/db': readVersion(dir, '@platformatic/db'),
      '@platformatic/sql-mapper': readVersion(dir, '@platformatic/sql-mapper'),
      '@platformatic/sql-openapi': readVersion(dir, '@platformatic/sql-openapi'),
      fastify: readVersion(dir, 'fastify'),
      'better-sqlite3': readVersion(dir, 'better-sqlite3'),
      '@databases/pg': readVersion(dir, '@databases/pg'),
    },
    sqliteWalSynchronous: walSynchronousDefault(dir),
  };
}

/** better-sqlite3's compile-time default for `synchronous` in WAL mode (it builds SQLite itself), from its defines. */
function walSynchronousDefault(dir) {
  try {
    const defines = readFileSync(path.join(dir, 'node_modules/better-sqlite3/deps/defines.gypi'), 'utf8');
    const level = /SQLITE_DEFAULT_WAL_SYNCHRONOUS=(\d)/.exec(defines)?.[1];
    return level === undefined ? 'FULL (SQLite default; no SQLITE_DEFAULT_WAL_SYNCHRONOUS)' : ({ 0: 'OFF', 1: 'NORMAL', 2: 'FULL', 3: 'EXTRA' }[level] ?? level);
  } catch {
    return 'unknown';
  }
}

/**
 * The configuration: REST (OpenAPI) over the `products` table only (Canon's other tables are not exposed; some have
 * primary keys Platformatic does not support), logging at warn like Canon's CANON_LOG_LEVEL=warn, no file watching.
 * Everything else is Platformatic's default: GraphQL on, no authorization, default limits (max 100), no metrics.
 * `include`: the tables exposed (another benchmark gives Platformatic a database of its own with its tables).
 */
export function platformaticConfig({ port, connectionString, version = PLATFORMATIC_VERSION, include = { products: true } }) {
  return {
    $schema: `https://schemas.platformatic.dev/@platformatic/db/${version}.json`,
    server: { hostname: '127.0.0.1', port, logger: { level: 'warn' } },
    db: { connectionString, include },
    watch: false,
  };
}

/** The connection string Platformatic wants for a SQLite file: sqlite:// followed by the absolute path. */
export function sqliteConnectionString(file) {
  return `sqlite://${path.resolve(file)}`;
}

/**
 * Starts `plt-db start -c <config>` on 127.0.0.1:port under `taskset -c <server core>` when pinned (one process; its
 * threads share the affinity). Wait for it with waitUntilReady(server, base, PLATFORMATIC_READY_PATH); stop it with
 * stopServer (SIGTERM, which Platformatic handles with close-with-grace). Returns startServer's handle plus `config`.
 */
export function startPlatformatic(port, { install, connectionString, pinned, name = 'Platformatic DB', include }) {
  const dir = makeTempDir('canon-bench-platformatic-config-');
  const config = platformaticConfig({ port, connectionString, version: install.versions['@platformatic/db'], ...(include ? { include } : {}) });
  const file = path.join(dir, 'platformatic.json');
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  const server = startServer(name, install.entry, ['start', '-c', file], childEnv({}), pinned);
  return { ...server, config };
}

export const PLATFORMATIC_READY_PATH = '/products?limit=1';
