// The /docs files read at start (src/http/rendering/docs-assets.ts): the build's copy first, the redoc package in a checkout built by tsc alone, the renderer's absence noted, the bundle's one third-party address taken out.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readDocsFiles, REDOC_LOGO_URL, RENDERER_FILES } from '../../../src/http/rendering/docs-assets.js';

describe('readDocsFiles', () => {
  let dir = '';
  /** Writes each renderer file under `root` (`layout`: the build's names or the package's), tagged with `tag`. */
  const write = (root: string, layout: 'built' | 'inPackage', tag: string): void => {
    for (const f of RENDERER_FILES) {
      const path = join(root, f[layout]);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, f.asset === 'redoc.standalone.js' ? `/* ${tag} */ img.src = "${REDOC_LOGO_URL}"; other("${REDOC_LOGO_URL}");` : `${f.asset} ${tag}`);
    }
  };
  const dirs = (name: string): { built: string; redocPackage: string; changelog: string } => ({
    built: join(dir, name, 'dist-assets') + '/',
    redocPackage: join(dir, name, 'redoc') + '/',
    changelog: join(dir, name, 'CHANGELOG.md'),
  });

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'canon-docs-assets-'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('prefers the build’s copy in dist/assets over the redoc package, and points the Redocly logo at an inline image', () => {
    const d = dirs('both');
    write(d.built, 'built', 'built');
    write(d.redocPackage, 'inPackage', 'package');
    writeFileSync(d.changelog, '# Changelog\n');
    const files = readDocsFiles(d);
    assert.equal(files.missingRenderer, undefined);
    const bundle = files.assets.get('redoc.standalone.js')!;
    assert.equal(
      bundle.body.toString('utf8'),
      '/* built */ img.src = "data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%221%22 height=%221%22/%3E"; other("data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%221%22 height=%221%22/%3E");',
    );
    assert.equal(bundle.contentType, 'text/javascript; charset=utf-8');
    assert.equal(files.assets.get('redoc.LICENSE')!.body.toString('utf8'), 'redoc.LICENSE built');
    assert.equal(files.assets.get('redoc.standalone.js.LICENSE.txt')!.contentType, 'text/plain; charset=utf-8');
    assert.equal(files.changelog!.body.toString('utf8'), '# Changelog\n');
    assert.equal(files.changelog!.contentType, 'text/markdown; charset=utf-8');
  });

  it('takes the whole renderer from the redoc package when the build’s copy is absent or incomplete', () => {
    const d = dirs('package');
    write(d.built, 'built', 'built');
    rmSync(join(d.built, RENDERER_FILES[2]!.built));
    write(d.redocPackage, 'inPackage', 'package');
    const files = readDocsFiles(d);
    assert.match(files.assets.get('redoc.standalone.js')!.body.toString('utf8'), /^\/\* package \*\//);
    assert.equal(files.assets.get('redoc.LICENSE')!.body.toString('utf8'), 'redoc.LICENSE package');
    assert.equal(files.changelog, undefined);
  });

  it('without a renderer anywhere, says where it looked; the page’s own script and style are there still', () => {
    const d = dirs('none');
    const files = readDocsFiles(d);
    assert.equal(files.missingRenderer, `${d.built}redoc.standalone.js (or ${d.redocPackage}bundles/redoc.standalone.js)`);
    assert.deepEqual([...files.assets.keys()].sort(), ['docs.css', 'docs.js']);
  });

  it('ETags are strong digests of the bytes; the fingerprint is the digest’s start', () => {
    const d = dirs('tags-one');
    write(d.built, 'built', 'one');
    const one = readDocsFiles(d).assets.get('redoc.standalone.js')!;
    const d2 = dirs('tags-two');
    write(d2.built, 'built', 'two');
    const two = readDocsFiles(d2).assets.get('redoc.standalone.js')!;
    assert.match(one.etag, /^"[A-Za-z0-9_-]{43}"$/);
    assert.notEqual(one.etag, two.etag);
    assert.equal(one.fingerprint, one.etag.slice(1, 17));
  });

  it('reads each place once per process: another app built from the same files gets the same assets, the disk not read again', () => {
    const d = dirs('once');
    write(d.built, 'built', 'first');
    const first = readDocsFiles(d);
    write(d.built, 'built', 'second');
    const again = readDocsFiles(d);
    assert.equal(again, first);
    assert.match(again.assets.get('redoc.standalone.js')!.body.toString('utf8'), /^\/\* first \*\//);
  });
});
