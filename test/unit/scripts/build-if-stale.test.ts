// scripts/build.mjs --if-stale (npm start): builds when dist/ is missing or any input changed, skips tsc when nothing did. Run in a copy of the script beside a fake tsc that counts its runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { RENDERER_FILES } from '../../../src/http/rendering/docs-assets.js';
import { GRAPHIQL_FILES } from '../../../src/http/rendering/graphiql-assets.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * A tsc that writes the entry of the project it is given (the server's, which npm start runs, or the client
 * package's), counts its runs of the server's project in tsc-runs, and fails while FAIL exists.
 */
const FAKE_TSC = `const fs = require('node:fs');
const path = require('node:path');
const root = process.cwd();
const project = process.argv[process.argv.indexOf('-p') + 1];
if (fs.existsSync(path.join(root, 'FAIL'))) { fs.appendFileSync(path.join(root, 'tsc-runs'), 'x'); process.exit(2); }
if (path.dirname(project) === path.join(root, 'packages', 'client')) {
  fs.mkdirSync(path.join(root, 'packages/client/dist'), { recursive: true });
  fs.writeFileSync(path.join(root, 'packages/client/dist/index.js'), '');
  process.exit(0);
}
fs.appendFileSync(path.join(root, 'tsc-runs'), 'x');
fs.mkdirSync(path.join(root, 'dist/src/cli'), { recursive: true });
fs.writeFileSync(path.join(root, 'dist/src/cli/main.js'), '');
`;

describe('scripts/build.mjs --if-stale', () => {
  let dir = '';
  const runs = (): number => (existsSync(join(dir, 'tsc-runs')) ? readFileSync(join(dir, 'tsc-runs'), 'utf8').length : 0);
  /** Runs the script; returns how many times it ran tsc, and its exit status. */
  const start = (...args: string[]): { built: boolean; status: number | null } => {
    const before = runs();
    const result = spawnSync(process.execPath, [join(dir, 'scripts/build.mjs'), ...args], { cwd: dir, encoding: 'utf8', timeout: 20_000 });
    assert.equal(result.error, undefined);
    return { built: runs() > before, status: result.status };
  };
  const source = (name: string): string => join(dir, 'src', name);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'canon-build-'));
    mkdirSync(join(dir, 'scripts'));
    copyFileSync(join(ROOT, 'scripts/build.mjs'), join(dir, 'scripts/build.mjs'));
    mkdirSync(join(dir, 'node_modules/typescript/bin'), { recursive: true });
    writeFileSync(join(dir, 'node_modules/typescript/package.json'), '{"name":"typescript","version":"0.0.0"}');
    writeFileSync(join(dir, 'node_modules/typescript/bin/tsc'), FAKE_TSC);
    // The /docs renderer the build copies into dist/assets: a fake redoc package with each file the server reads.
    for (const f of RENDERER_FILES) {
      mkdirSync(join(dir, 'node_modules/redoc', f.inPackage, '..'), { recursive: true });
      writeFileSync(join(dir, 'node_modules/redoc', f.inPackage), `${f.asset} 1\n`);
    }
    // GraphiQL's files, copied likewise: fake graphiql, react and react-dom packages.
    for (const f of GRAPHIQL_FILES) {
      mkdirSync(join(dir, 'node_modules', f.inModules, '..'), { recursive: true });
      writeFileSync(join(dir, 'node_modules', f.inModules), `${f.asset} 1\n`);
    }
    writeFileSync(join(dir, 'package.json'), '{"name":"fake","type":"module"}');
    writeFileSync(join(dir, 'tsconfig.json'), '{}');
    // The client package, built first (its own tsconfig).
    mkdirSync(join(dir, 'packages/client/src'), { recursive: true });
    writeFileSync(join(dir, 'packages/client/tsconfig.json'), '{}');
    writeFileSync(join(dir, 'packages/client/package.json'), '{"name":"canon-client"}');
    writeFileSync(join(dir, 'packages/client/src/index.ts'), 'export {};\n');
    mkdirSync(join(dir, 'src/cli'), { recursive: true });
    mkdirSync(join(dir, 'test'));
    writeFileSync(source('a.ts'), 'export const a = 1;\n');
    writeFileSync(source('cli/main.ts'), 'export {};\n');
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('builds a fresh clone (no dist/), then skips tsc while nothing changed', () => {
    assert.deepEqual(start('--if-stale'), { built: true, status: 0 });
    assert.ok(existsSync(join(dir, 'dist/.build-stamp')));
    assert.deepEqual(start('--if-stale'), { built: false, status: 0 });
    assert.deepEqual(start('--if-stale'), { built: false, status: 0 });
  });

  it('builds again after a source is edited, added, deleted or renamed, or restored with an older time', () => {
    writeFileSync(source('a.ts'), 'export const a = 2;\n');
    assert.equal(start('--if-stale').built, true, 'edited');
    assert.equal(start('--if-stale').built, false);

    writeFileSync(join(dir, 'packages/client/src/index.ts'), 'export const x = 1;\n');
    assert.equal(start('--if-stale').built, true, 'a client source edited');
    assert.ok(existsSync(join(dir, 'packages/client/dist/index.js')), 'the client is built too');
    assert.equal(start('--if-stale').built, false);

    writeFileSync(join(dir, 'test/b.test.ts'), 'export {};\n');
    assert.equal(start('--if-stale').built, true, 'added');
    rmSync(join(dir, 'test/b.test.ts'));
    assert.equal(start('--if-stale').built, true, 'deleted');
    renameSync(source('a.ts'), source('c.ts'));
    assert.equal(start('--if-stale').built, true, 'renamed');
    assert.equal(start('--if-stale').built, false);

    // Same size, time moved back a day (a checkout of older content keeps the length by chance; tar -x keeps old times).
    const old = new Date(statSync(source('c.ts')).mtimeMs - 86_400_000);
    writeFileSync(source('c.ts'), 'export const a = 3;\n');
    utimesSync(source('c.ts'), old, old);
    assert.equal(start('--if-stale').built, true, 'older time');

    writeFileSync(join(dir, 'tsconfig.json'), '{ }');
    assert.equal(start('--if-stale').built, true, 'tsconfig.json changed');
    assert.equal(start('--if-stale').built, false);
  });

  it('builds when the entry is gone though the stamp is there', () => {
    rmSync(join(dir, 'dist/src'), { recursive: true });
    assert.equal(start('--if-stale').built, true);
    assert.ok(existsSync(join(dir, 'dist/src/cli/main.js')));
  });

  it('a failed build exits with its status and records nothing, so the next start tries again', () => {
    writeFileSync(source('c.ts'), 'export const a = "broken";\n');
    writeFileSync(join(dir, 'FAIL'), '');
    assert.deepEqual(start('--if-stale'), { built: true, status: 2 });
    assert.deepEqual(start('--if-stale'), { built: true, status: 2 });
    rmSync(join(dir, 'FAIL'));
    assert.deepEqual(start('--if-stale'), { built: true, status: 0 });
    assert.deepEqual(start('--if-stale'), { built: false, status: 0 });
  });

  it('copies the /docs renderer into dist/assets under the names the server reads; builds again when a copy is gone; fails without redoc', () => {
    assert.deepEqual(start(), { built: true, status: 0 });
    for (const f of RENDERER_FILES) assert.equal(readFileSync(join(dir, 'dist/assets', f.built), 'utf8'), `${f.asset} 1\n`, f.built);
    rmSync(join(dir, 'dist/assets', RENDERER_FILES[0]!.built));
    assert.deepEqual(start('--if-stale'), { built: true, status: 0 }, 'a renderer file missing from dist/assets');
    assert.ok(existsSync(join(dir, 'dist/assets', RENDERER_FILES[0]!.built)));
    assert.deepEqual(start('--if-stale'), { built: false, status: 0 });

    const bundle = join(dir, 'node_modules/redoc', RENDERER_FILES[0]!.inPackage);
    renameSync(bundle, `${bundle}.away`);
    const result = spawnSync(process.execPath, [join(dir, 'scripts/build.mjs')], { cwd: dir, encoding: 'utf8', timeout: 20_000 });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /the \/docs renderer is missing .*redoc\/bundles\/redoc\.standalone\.js.*npm ci/);
    assert.deepEqual(start('--if-stale'), { built: true, status: 1 }, 'a failed copy records no stamp');
    renameSync(`${bundle}.away`, bundle);
    assert.deepEqual(start('--if-stale'), { built: true, status: 0 });
  });

  it('copies GraphiQL’s files into dist/assets under the names the server reads; builds again when one is gone; fails without graphiql', () => {
    assert.deepEqual(start(), { built: true, status: 0 });
    for (const f of GRAPHIQL_FILES) assert.equal(readFileSync(join(dir, 'dist/assets', f.asset), 'utf8'), `${f.asset} 1\n`, f.asset);
    rmSync(join(dir, 'dist/assets', 'graphiql.min.js'));
    assert.deepEqual(start('--if-stale'), { built: true, status: 0 }, 'a GraphiQL file missing from dist/assets');
    assert.deepEqual(start('--if-stale'), { built: false, status: 0 });

    const bundle = join(dir, 'node_modules/graphiql/graphiql.min.js');
    renameSync(bundle, `${bundle}.away`);
    const result = spawnSync(process.execPath, [join(dir, 'scripts/build.mjs')], { cwd: dir, encoding: 'utf8', timeout: 20_000 });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /GraphiQL is missing .*graphiql\/graphiql\.min\.js.*npm ci/);
    renameSync(`${bundle}.away`, bundle);
    assert.deepEqual(start('--if-stale'), { built: true, status: 0 });
  });

  it('without --if-stale (npm run build) it always builds, and leaves a stamp npm start trusts', () => {
    assert.deepEqual(start(), { built: true, status: 0 });
    assert.deepEqual(start('--if-stale'), { built: false, status: 0 });
  });
});
