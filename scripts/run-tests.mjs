// Runs every compiled test file with Node's built-in test runner; an explicit file list works on Node 20 and newer alike.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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
// at once (Node's default is one less than the cores: one file at a time on a 2-core machine; .ci/run sets 4).
const concurrency = process.env.CANON_TEST_CONCURRENCY ? [`--test-concurrency=${process.env.CANON_TEST_CONCURRENCY}`] : [];
// The spec reporter (Node 24's default; Node 20's default off a terminal is TAP, thousands of lines), then the
// slowest files and their share of the time (test-durations.mjs): where to look when the suite grows slow.
const durations = fileURLToPath(new URL('./test-durations.mjs', import.meta.url));
const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${durations}`, '--test-reporter-destination=stdout'];
// Browser files (`*-browser.test.js`: Chromium rendering Redoc or GraphiQL) run after the rest, one at a time: with
// four files at once on two cores, Redoc in Chromium took over 45 s to render a page that takes 7–11 s alone (CI,
// 2026-11-28), which measures the neighbours, not the page.
const alone = files.filter((f) => f.endsWith('-browser.test.js'));
const together = files.filter((f) => !alone.includes(f));
function run(list, extra) {
  if (list.length === 0) return 0;
  const result = spawnSync(process.execPath, ['--enable-source-maps', '--test', '--test-timeout=180000', ...extra, ...reporters, ...list], { stdio: 'inherit' });
  return result.status ?? 1;
}
const first = run(together, concurrency);
const second = run(alone, ['--test-concurrency=1']);
process.exit(first !== 0 ? first : second);
