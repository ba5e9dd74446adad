// A node:test reporter that adds up each test file's top-level test times and lists the slowest files at the end: where the suite's wall time goes.
//
// A file's top-level tests and suites run one after another, so their durations add up to the file's time less
// its start-up (loading modules). Files run at once (CANON_TEST_CONCURRENCY) share the machine: their times are
// longer than alone, the shares still show which files to look at first. Node names the file that defines a test
// (after source maps): a suite module shared by several test files (walk.ts, contract.ts) counts them together,
// and a file the runner ends at its time limit shows under its compiled path.
import { relative } from 'node:path';

const SHOWN = 20;

export default async function* durations(source) {
  /** file -> { ms, tests, failed } */
  const files = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (!file) continue;
    const entry = files.get(file) ?? { ms: 0, tests: 0, failed: 0 };
    files.set(file, entry);
    // Suites report too: only leaf tests count as tests; only top-level entries add time (their children are inside it).
    if (details?.type !== 'suite') {
      entry.tests++;
      if (event.type === 'test:fail') entry.failed++;
    }
    if (nesting === 0) entry.ms += details?.duration_ms ?? 0;
  }
  const rows = [...files].map(([file, entry]) => ({ file: relative(process.cwd(), file), ...entry })).sort((a, b) => b.ms - a.ms);
  const total = rows.reduce((sum, r) => sum + r.ms, 0);
  yield `\nslowest test files (top-level test time by defining file; ${rows.length} files, ${(total / 1000).toFixed(1)} s in all):\n`;
  for (const r of rows.slice(0, SHOWN)) {
    yield `${(r.ms / 1000).toFixed(1).padStart(7)} s ${((100 * r.ms) / (total || 1)).toFixed(1).padStart(5)} %  ${r.file} (${r.tests} tests${r.failed ? `, ${r.failed} failed` : ''})\n`;
  }
}
