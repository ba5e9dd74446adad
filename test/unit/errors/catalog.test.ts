// The published catalog (docs/errors.md) and the code's catalog must list the same codes with the same statuses.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { ERROR_CATALOG } from '../../../src/errors/catalog.js';

function docTable(): Map<string, number> {
  const rows = new Map<string, number>();
  for (const line of readFileSync('docs/errors.md', 'utf8').split('\n')) {
    const m = /^\| `([A-Z_]+)` \| (\d{3}) \|/.exec(line);
    if (m) rows.set(m[1]!, Number(m[2]));
  }
  return rows;
}

it('docs/errors.md lists exactly the codes of the catalog, with their statuses', () => {
  const docs = docTable();
  const code = new Map(Object.entries(ERROR_CATALOG).map(([c, e]) => [c, e.status]));
  assert.deepEqual([...docs.entries()].sort(), [...code.entries()].sort());
});

it('every code the source raises is in the catalog', () => {
  const used = new Set<string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) for (const m of readFileSync(path, 'utf8').matchAll(/new AppError\('([A-Z_]+)'/g)) used.add(m[1]!);
    }
  };
  walk('src');
  walk('examples');
  for (const c of used) assert.ok(c in ERROR_CATALOG, `${c} is raised but not catalogued`);
});
