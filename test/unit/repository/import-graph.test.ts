// Issue 14.5: the modules of src import one another without cycles (the folder layers are enforced by eslint.config.js; this catches cycles inside a folder too).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Relative imports of a module, type-only ones included (a cycle of types is still a cycle to read), and the
 * modules it imports when it needs them (`await import('./…')`: loaded later, still an arrow of the graph).
 */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)[^'"]*from '(\.[^']+)';/gm)) out.push(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
  for (const m of text.matchAll(/\bimport\('(\.[^']+)'\)/g)) out.push(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
  return out;
}

describe('the import graph of src', () => {
  it('has no cycles', () => {
    const graph = new Map(sources(SRC).map((f) => [f, importsOf(f).filter((t) => t.startsWith(SRC))]));
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(ROOT, f)).join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    assert.deepEqual(cycles, []);
  });
});
