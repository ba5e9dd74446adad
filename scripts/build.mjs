// Builds dist/ with tsc and copies the /docs renderer and GraphiQL into dist/assets; with --if-stale (npm start) only when an input changed since the last build, so a start with nothing changed skips tsc.
//
// Why not tsc's own check: even with nothing to do, an incremental `tsc -p` parses and type-checks every file
// (about 10 s here) and `tsc -b` still loads the compiler and hashes every input (about 1.5 s). This reads no
// file: it fingerprints the inputs' paths, sizes and modification times (about 300 files, a few milliseconds)
// and compares the fingerprint with the one recorded when dist/ was last built from them.
//
// The fingerprint is taken before tsc runs, so a file saved during a build leaves a stamp that no longer
// matches and the next start builds again. Any difference counts, not only a newer time: a file added,
// deleted, renamed, or restored with an older time (a checkout, an extracted archive) rebuilds too. A build
// that fails writes no stamp. A fresh clone has no dist/ and no stamp, so it builds.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** What tsconfig.json compiles from (its `include`), and the files that change how it compiles. */
const INPUT_DIRS = ['src', 'examples', 'test', 'packages/client/src'];
const INPUT_FILES = ['tsconfig.json', 'package.json', 'package-lock.json', 'packages/client/tsconfig.json', 'packages/client/package.json'];
const STAMP = join(ROOT, 'dist', '.build-stamp');
/** What `npm start` runs: a stamp without it (dist/ partly deleted) does not count. */
const ENTRY = join(ROOT, 'dist', 'src', 'cli', 'main.js');
/**
 * The typed client (packages/client, its own tsconfig: DOM types and no Node types, so nothing Node-only slips
 * into the browser build). Built first: the tests in tsconfig.json import its dist/.
 */
const CLIENT = join(ROOT, 'packages', 'client');
const CLIENT_ENTRY = join(CLIENT, 'dist', 'index.js');
/**
 * The /docs renderer (src/http/rendering/docs-assets.ts RENDERER_FILES): Redoc's standalone bundle and its licences, from
 * the redoc devDependency into dist/assets, so the packed package (package.json files) carries them without
 * depending on redoc at run time. Its version is in package-lock.json, an input: upgrading redoc rebuilds.
 */
const ASSETS = join(ROOT, 'dist', 'assets');
const RENDERER = [
  ['redoc/bundles/redoc.standalone.js', 'redoc.standalone.js'],
  ['redoc/bundles/redoc.standalone.js.LICENSE.txt', 'redoc.standalone.js.LICENSE.txt'],
  ['redoc/LICENSE', 'redoc.LICENSE'],
];
/**
 * The GraphiQL page's files (src/http/rendering/graphiql-assets.ts GRAPHIQL_FILES): React, ReactDOM and GraphiQL's
 * browser builds and licences, from the graphiql, react and react-dom devDependencies, for the same reason.
 */
const GRAPHIQL = [
  ['react/umd/react.production.min.js', 'react.production.min.js'],
  ['react-dom/umd/react-dom.production.min.js', 'react-dom.production.min.js'],
  ['graphiql/graphiql.min.js', 'graphiql.min.js'],
  ['graphiql/graphiql.min.css', 'graphiql.min.css'],
  ['react/LICENSE', 'react.LICENSE'],
  ['react-dom/LICENSE', 'react-dom.LICENSE'],
  ['graphiql/LICENSE', 'graphiql.LICENSE'],
];
const COPIED = [...RENDERER, ...GRAPHIQL];

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOENT') return;
    throw err;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else out.push(path);
  }
}

/** One line per input: its path, size and modification time; hashed in path order. */
function fingerprint(root) {
  const files = [];
  for (const dir of INPUT_DIRS) walk(join(root, dir), files);
  for (const file of INPUT_FILES) if (existsSync(join(root, file))) files.push(join(root, file));
  const hash = createHash('sha256');
  for (const file of files.map((f) => relative(root, f)).sort()) {
    const s = statSync(join(root, file));
    hash.update(`${file}\0${s.size}\0${s.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

function current(print) {
  try {
    return existsSync(ENTRY) && existsSync(CLIENT_ENTRY) && COPIED.every(([, to]) => existsSync(join(ASSETS, to))) && readFileSync(STAMP, 'utf8') === print;
  } catch (err) {
    if (err.code === 'ENOENT') return false;
    throw err;
  }
}

function main() {
  const ifStale = process.argv.includes('--if-stale');
  const print = fingerprint(ROOT);
  if (ifStale && current(print)) return 0;
  // A build that fails leaves no stamp at all, not even an earlier one: what it did not finish is built next time.
  rmSync(STAMP, { force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  for (const project of [join(CLIENT, 'tsconfig.json'), join(ROOT, 'tsconfig.json')]) {
    const result = spawnSync(process.execPath, [tsc, '-p', project], { cwd: ROOT, stdio: 'inherit' });
    if (result.error) throw result.error;
    if (result.status !== 0) return result.status ?? 1;
  }
  const modules = join(ROOT, 'node_modules');
  for (const [files, what] of [
    [RENDERER, 'the /docs renderer'],
    [GRAPHIQL, 'GraphiQL'],
  ]) {
    const absent = files.filter(([from]) => !existsSync(join(modules, from)));
    if (absent.length > 0) {
      console.error(`build: ${what} is missing (${absent.map(([from]) => join(modules, from)).join(', ')}); install the dev dependencies (npm ci)`);
      return 1;
    }
  }
  mkdirSync(ASSETS, { recursive: true });
  for (const [from, to] of COPIED) copyFileSync(join(modules, from), join(ASSETS, to));
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, print);
  return 0;
}

process.exit(main());
