// Issue 13.10: the repository carries no profiler logs, and its documents link nothing outside it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function tracked(): string[] {
  return execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
}

describe(
  'repository hygiene',
  {
    skip: (() => {
      try {
        tracked();
        return false;
      } catch {
        return 'not a git checkout';
      }
    })(),
  },
  () => {
    it('commits no V8 profiler logs or CPU profiles, and ignores them', () => {
      assert.deepEqual(
        tracked().filter((f) => /(^|\/)isolate-.*-v8\.log$|\.cpuprofile$/.test(f)),
        [],
      );
      assert.match(readFileSync(`${ROOT}.gitignore`, 'utf8'), /^isolate-\*-v8\.log$/m);
    });

    it('the README and docs link nothing a clone does not have (../shared)', () => {
      const documents = tracked().filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')));
      const outside = documents.filter((f) => /\]\(\.\.\/shared|`\.\.\/shared/.test(readFileSync(`${ROOT}${f}`, 'utf8')));
      assert.deepEqual(outside, []);
      assert.match(readFileSync(`${ROOT}README.md`, 'utf8'), /\(docs\/conventions\.md\)/);
    });
  },
);
