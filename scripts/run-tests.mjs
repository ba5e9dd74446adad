// Runs every compiled test file with Node's built-in test runner; an explicit file list works on Node 20 and newer alike.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const filter = process.argv.slice(2);
const files = collect('dist/test')
  .filter((f) => filter.length === 0 || filter.some((p) => f.includes(p)))
  .sort();
if (files.length === 0) {
  console.error('no test files found under dist/test');
  process.exit(1);
}
// A per-test time limit, so a hung test fails instead of stalling CI. CANON_TEST_CONCURRENCY runs that many files
// at once (Node's default is one less than the cores: one file at a time on a 2-core machine, as CI runs them).
const concurrency = process.env.CANON_TEST_CONCURRENCY ? [`--test-concurrency=${process.env.CANON_TEST_CONCURRENCY}`] : [];
const result = spawnSync(process.execPath, ['--enable-source-maps', '--test', '--test-timeout=180000', ...concurrency, ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
