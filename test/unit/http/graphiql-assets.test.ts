// The GraphiQL files read at start (src/http/rendering/graphiql-assets.ts): the build's copy first, node_modules in a checkout built by tsc alone, their absence noted, source-map comments taken out; and the real bundles load nothing from another host by themselves.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { GRAPHIQL_FILES, readGraphiqlFiles } from '../../../src/http/rendering/graphiql-assets.js';

const NODE_MODULES = fileURLToPath(new URL('../../../../node_modules/', import.meta.url));

describe('readGraphiqlFiles', () => {
  let dir = '';
  /** Writes each file under `root` (`layout`: the build's names or node_modules'), tagged with `tag`. */
  const write = (root: string, layout: 'built' | 'modules', tag: string): void => {
    for (const f of GRAPHIQL_FILES) {
      const path = join(root, layout === 'built' ? f.asset : f.inModules);
      mkdirSync(join(path, '..'), { recursive: true });
      const map = f.asset.endsWith('.js') ? `\n//# sourceMappingURL=${f.asset}.map` : f.asset.endsWith('.css') ? `\n/*# sourceMappingURL=${f.asset}.map*/` : '';
      writeFileSync(path, `${f.asset} ${tag}${map}`);
    }
  };
  const dirs = (name: string): { built: string; nodeModules: string } => ({ built: join(dir, name, 'dist-assets') + '/', nodeModules: join(dir, name, 'node_modules') + '/' });

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'canon-graphiql-assets-'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('prefers the build’s copy over node_modules and takes the source-map comments out of scripts and style sheets only', () => {
    const d = dirs('both');
    write(d.built, 'built', 'built');
    write(d.nodeModules, 'modules', 'modules');
    const files = readGraphiqlFiles(d);
    assert.equal(files.missing, undefined);
    assert.equal(files.assets.get('graphiql.min.js')!.body.toString('utf8'), 'graphiql.min.js built\n');
    assert.equal(files.assets.get('graphiql.min.js')!.contentType, 'text/javascript; charset=utf-8');
    assert.equal(files.assets.get('graphiql.min.css')!.body.toString('utf8'), 'graphiql.min.css built\n');
    assert.equal(files.assets.get('graphiql.min.css')!.contentType, 'text/css; charset=utf-8');
    assert.equal(files.assets.get('react.LICENSE')!.body.toString('utf8'), 'react.LICENSE built');
    assert.equal(files.assets.get('react.LICENSE')!.contentType, 'text/plain; charset=utf-8');
    // The page's own files, always there.
    assert.match(files.assets.get('graphiql-page.js')!.body.toString('utf8'), /ReactDOM\.createRoot/);
    assert.match(files.assets.get('graphiql-page.css')!.body.toString('utf8'), /#graphiql/);
  });

  it('takes every file from node_modules when the build’s copy is incomplete; notes their absence when neither is whole', () => {
    const d = dirs('modules');
    write(d.built, 'built', 'built');
    rmSync(join(d.built, 'react.LICENSE'));
    write(d.nodeModules, 'modules', 'modules');
    const files = readGraphiqlFiles(d);
    assert.equal(files.assets.get('graphiql.min.js')!.body.toString('utf8'), 'graphiql.min.js modules\n');
    assert.equal(files.assets.get('react.LICENSE')!.body.toString('utf8'), 'react.LICENSE modules');

    const none = dirs('none');
    write(none.nodeModules, 'modules', 'modules');
    rmSync(join(none.nodeModules, 'graphiql/graphiql.min.js'));
    const missing = readGraphiqlFiles(none);
    assert.equal(missing.missing, `${none.built}graphiql.min.js (or ${none.nodeModules}graphiql/graphiql.min.js)`);
    assert.equal(missing.assets.get('graphiql.min.js'), undefined);
    assert.ok(missing.assets.get('graphiql-page.js'));
  });
});

describe('the bundles served', () => {
  it('load nothing from another host by themselves: no CDN in the scripts, no @import or remote url() in the style sheet', () => {
    for (const f of GRAPHIQL_FILES.filter((g) => g.asset.endsWith('.js'))) {
      const text = readFileSync(join(NODE_MODULES, f.inModules), 'utf8');
      // The hosts a GraphiQL or React build would load from (its CDN example uses unpkg and jsdelivr; fonts from Google).
      for (const host of ['unpkg.com', 'jsdelivr.net', 'cdnjs.cloudflare.com', 'esm.sh', 'fonts.googleapis.com', 'fonts.gstatic.com', '//cdn.'])
        assert.ok(!text.includes(host), `${f.asset} names ${host}`);
    }
    const css = readFileSync(join(NODE_MODULES, 'graphiql/graphiql.min.css'), 'utf8');
    assert.doesNotMatch(css, /@import/);
    const urls = [...css.matchAll(/url\(\s*['"]?([^'")]*)/g)].map((m) => m[1]!);
    assert.ok(urls.length > 0);
    assert.deepEqual(
      urls.filter((u) => !u.startsWith('data:')),
      [],
      'every url() of the style sheet is inline (fonts and icons): the CSP allows data: for them',
    );
  });
});
