// Issue 27.7: GET /docs, its assets and the changelog through HTTP: status, media types, validators and caching, the CSP, the version switcher under every strategy, and the start banner's docs URL.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { errorShape, MODES, startServer, TEST_PROCESS_ENV, type TestServer } from '../../support/harness.js';
import { reapOnExit } from '../../support/reaper.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
/** Written out, not imported: widening the policy must fail here. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const STRONG_ETAG = /^"[A-Za-z0-9_-]{43}"$/;
const PUBLIC = { key: null } as const;

/** Every `href` and `src` of a page, in order. */
function urlsOf(html: string): string[] {
  return [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
}

function attribute(html: string, name: string): string {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(html);
  assert.ok(m, `the page has ${name}`);
  return m[1]!.replaceAll('&quot;', '"').replaceAll('&amp;', '&');
}

for (const mode of MODES.filter((m) => m.startsWith('inject'))) {
  describe(`/docs (${mode})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer(mode);
    });
    after(async () => server?.close());

    it('GET /docs is the newest version’s reference: public HTML with a strong ETag, a short public cache and its own CSP', async () => {
      const res = await server.request('GET', '/docs', { ...PUBLIC, headers: { accept: 'text/html' } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(res.headers.etag!, STRONG_ETAG);
      assert.equal(res.headers['cache-control'], 'public, max-age=300');
      assert.equal(res.headers['content-security-policy'], CSP);
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.match(res.text, /^<!doctype html>/);
      assert.equal(attribute(res.text, 'data-spec-url'), '/v2/openapi.json');
      assert.equal(attribute(res.text, 'data-spec-headers'), '{}');
      // Scripts only by URL from this server (the CSP allows no inline script): Redoc's bundle, then the page's.
      const scripts = [...res.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
      assert.equal(scripts.length, 2);
      assert.match(scripts[0]!, /^ src="\/docs\/assets\/redoc\.standalone\.js\?v=[A-Za-z0-9_-]{16}"$/);
      assert.match(scripts[1]!, /^ src="\/docs\/assets\/docs\.js\?v=[A-Za-z0-9_-]{16}"$/);
      // Nothing on the page names another host.
      for (const url of urlsOf(res.text)) assert.match(url, /^(\/|data:)/, url);
      assert.doesNotMatch(res.text, /https?:\/\//);
      // The switcher, the guide and the changelog.
      assert.match(res.text, /<a href="\/docs" aria-current="page">v2 \(current\)<\/a> <a href="\/docs\?version=v1">v1 \(deprecated\)<\/a>/);
      assert.match(res.text, /<a href="\/docs\/migrations\/v1-to-v2">Migrating from v1 to v2<\/a>/);
      assert.match(res.text, /<a href="\/docs\/changelog">Changelog<\/a>/);
      assert.match(res.text, /<a href="\/graphql">GraphQL \(GraphiQL\)<\/a>/);
    });

    it('every URL the page names answers 200 without credentials, each asset in its media type', async () => {
      const page = await server.request('GET', '/docs', PUBLIC);
      const types: Record<string, string> = {};
      for (const url of urlsOf(page.text).filter((u) => u.startsWith('/'))) {
        // /graphql is GraphiQL for a browser (its Accept); for other clients the GraphQL endpoint.
        const res = await server.request('GET', url, url === '/graphql' ? { ...PUBLIC, headers: { accept: 'text/html' } } : PUBLIC);
        assert.equal(res.status, 200, `${url}: ${res.text.slice(0, 200)}`);
        types[url.split('?')[0]!] = res.headers['content-type']!;
      }
      assert.deepEqual(types, {
        '/docs': 'text/html; charset=utf-8',
        '/docs/assets/docs.css': 'text/css; charset=utf-8',
        '/docs/assets/redoc.standalone.js': 'text/javascript; charset=utf-8',
        '/docs/assets/docs.js': 'text/javascript; charset=utf-8',
        '/docs/migrations/v1-to-v2': 'text/markdown; charset=utf-8',
        '/docs/changelog': 'text/markdown; charset=utf-8',
        '/v2/openapi.json': 'application/json; charset=utf-8',
        '/graphql': 'text/html; charset=utf-8',
      });
    });

    it('the version switcher: ?version=v1 and ?version=1 are v1’s page; an unserved or malformed version is 400 UNSUPPORTED_VERSION; other parameters 400 INVALID_QUERY', async () => {
      const newest = await server.request('GET', '/docs', PUBLIC);
      const v1 = await server.request('GET', '/docs?version=v1', PUBLIC);
      assert.equal(v1.status, 200);
      assert.equal(attribute(v1.text, 'data-spec-url'), '/v1/openapi.json');
      assert.match(v1.text, /<a href="\/docs\?version=v1" aria-current="page">v1 \(deprecated\)<\/a>/);
      assert.notEqual(v1.headers.etag, newest.headers.etag);
      const one = await server.request('GET', '/docs?version=1', PUBLIC);
      assert.equal(one.text, v1.text);
      assert.equal(one.headers.etag, v1.headers.etag);
      assert.equal((await server.request('GET', '/docs?version=v2', PUBLIC)).text, newest.text);

      for (const asked of ['v3', 'abc', '']) {
        const res = await server.request('GET', `/docs?version=${asked}`, PUBLIC);
        assert.equal(res.status, 400, asked);
        const error = errorShape(res);
        assert.equal(error.code, 'UNSUPPORTED_VERSION');
        assert.deepEqual(error.details, [{ field: 'version', message: 'must be one of v2, v1', value: asked }]);
      }
      const unknown = await server.request('GET', '/docs?lang=en', PUBLIC);
      assert.equal(unknown.status, 400);
      assert.equal(errorShape(unknown).code, 'INVALID_QUERY');
      assert.deepEqual(errorShape(unknown).details, [{ field: 'lang', message: 'is not a parameter of this page' }]);
      const twice = await server.request('GET', '/docs?version=1&version=2', PUBLIC);
      assert.equal(twice.status, 400);
      assert.deepEqual(errorShape(twice).details, [{ field: 'version', message: 'must be given once' }]);
    });

    it('If-None-Match with the page’s ETag is 304 without a body; another tag is the page', async () => {
      const page = await server.request('GET', '/docs?version=v1', PUBLIC);
      const hit = await server.request('GET', '/docs?version=v1', { ...PUBLIC, headers: { 'if-none-match': page.headers.etag! } });
      assert.equal(hit.status, 304);
      assert.equal(hit.text, '');
      assert.equal(hit.headers.etag, page.headers.etag);
      assert.equal(hit.headers['cache-control'], 'public, max-age=300');
      const other = await server.request('GET', '/docs?version=v1', { ...PUBLIC, headers: { 'if-none-match': '"something-else"' } });
      assert.equal(other.status, 200);
      // v2's tag does not validate v1's page.
      const v2 = await server.request('GET', '/docs', PUBLIC);
      assert.equal((await server.request('GET', '/docs?version=v1', { ...PUBLIC, headers: { 'if-none-match': v2.headers.etag! } })).status, 200);
    });

    it('assets: a year’s immutable cache under the page’s fingerprint, five minutes by name alone or another fingerprint; strong ETags and 304', async () => {
      const page = await server.request('GET', '/docs', PUBLIC);
      const bundleUrl = urlsOf(page.text).find((u) => u.startsWith('/docs/assets/redoc.standalone.js?v='))!;
      const fingerprinted = await server.request('GET', bundleUrl, PUBLIC);
      assert.equal(fingerprinted.status, 200);
      assert.equal(fingerprinted.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(fingerprinted.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(fingerprinted.headers.etag!, STRONG_ETAG);
      // The fingerprint is the start of the ETag's digest: it names exactly these bytes.
      assert.equal(bundleUrl.split('?v=')[1], fingerprinted.headers.etag!.slice(1, 17));
      // Redoc's bundle, with the one third-party address it loads by itself (the Redocly logo) taken out.
      const original = readFileSync(`${ROOT}node_modules/redoc/bundles/redoc.standalone.js`, 'utf8');
      assert.ok(original.includes('https://cdn.redoc.ly/redoc/logo-mini.svg'));
      assert.ok(!fingerprinted.text.includes('cdn.redoc.ly'));
      assert.ok(fingerprinted.text.startsWith('/*! For license information please see redoc.standalone.js.LICENSE.txt */'));
      assert.ok(Math.abs(fingerprinted.text.length - original.length) < 200);

      const byName = await server.request('GET', '/docs/assets/redoc.standalone.js', PUBLIC);
      assert.equal(byName.headers['cache-control'], 'public, max-age=300');
      assert.equal(byName.headers.etag, fingerprinted.headers.etag);
      assert.equal((await server.request('GET', '/docs/assets/redoc.standalone.js?v=0000000000000000', PUBLIC)).headers['cache-control'], 'public, max-age=300');
      const revalidated = await server.request('GET', bundleUrl, { ...PUBLIC, headers: { 'if-none-match': fingerprinted.headers.etag! } });
      assert.equal(revalidated.status, 304);
      assert.equal(revalidated.text, '');

      const licence = await server.request('GET', '/docs/assets/redoc.standalone.js.LICENSE.txt', PUBLIC);
      assert.equal(licence.status, 200);
      assert.equal(licence.headers['content-type'], 'text/plain; charset=utf-8');
      assert.match(licence.text, /ReDoc - OpenAPI\/Swagger-generated API Reference Documentation/);
      const redocLicence = await server.request('GET', '/docs/assets/redoc.LICENSE', PUBLIC);
      assert.equal(redocLicence.text, readFileSync(`${ROOT}node_modules/redoc/LICENSE`, 'utf8'));

      const missing = await server.request('GET', '/docs/assets/app.js', PUBLIC);
      assert.equal(missing.status, 404);
      assert.equal(errorShape(missing).code, 'ROUTE_NOT_FOUND');
      const traversal = await server.request('GET', '/docs/assets/..%2F..%2Fpackage.json', PUBLIC);
      assert.equal(traversal.status, 404);
      assert.equal(errorShape(traversal).code, 'ROUTE_NOT_FOUND');
      const query = await server.request('GET', '/docs/assets/docs.js?x=1', PUBLIC);
      assert.equal(query.status, 400);
      assert.deepEqual(errorShape(query).details, [{ field: 'x', message: 'is not a parameter of this page' }]);
    });

    it('GET /docs/changelog is docs/CHANGELOG.md as Markdown, with a strong ETag and 304', async () => {
      const res = await server.request('GET', '/docs/changelog', PUBLIC);
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'text/markdown; charset=utf-8');
      assert.equal(res.text, readFileSync(`${ROOT}docs/CHANGELOG.md`, 'utf8'));
      assert.match(res.headers.etag!, STRONG_ETAG);
      assert.equal(res.headers['cache-control'], 'public, max-age=300');
      const hit = await server.request('GET', '/docs/changelog', { ...PUBLIC, headers: { 'if-none-match': `W/${res.headers.etag}, "x"` } });
      assert.equal(hit.status, 304);
    });

    it('documentation answers whatever Accept asks (a browser’s text/html, a Markdown reader); the API itself still 406', async () => {
      for (const [path, accept] of [
        ['/docs', 'text/html'],
        ['/docs/changelog', 'text/markdown'],
        ['/docs/assets/docs.css', 'text/css'],
        ['/docs/assets/docs.js', 'text/javascript'],
      ] as const) {
        assert.equal((await server.request('GET', path, { ...PUBLIC, headers: { accept } })).status, 200, path);
      }
      assert.equal((await server.request('GET', '/v2/products', { headers: { accept: 'text/html' } })).status, 406);
    });

    it('the pages are catalog operations, public, with their own methods (405 and Allow otherwise), and the OpenAPI document lists them', async () => {
      const ops = server.runtime.catalog.operations.filter((op) => op.id.startsWith('docs.'));
      assert.deepEqual(ops.map((op) => `${op.id} ${op.method} ${op.path} ${op.authentication}`).sort(), [
        'docs.asset GET /docs/assets/:asset none',
        'docs.changelog GET /docs/changelog none',
        'docs.migration GET /docs/migrations/:guide none',
        'docs.reference GET /docs none',
      ]);
      const post = await server.request('POST', '/docs', { ...PUBLIC, body: {} });
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET, HEAD, OPTIONS');
      const document = (await server.request('GET', '/v2/openapi.json', PUBLIC)).body as { paths: Record<string, { get?: { operationId?: string } }> };
      assert.equal(document.paths['/docs']?.get?.operationId, 'docs.reference');
      assert.equal(document.paths['/docs/assets/{asset}']?.get?.operationId, 'docs.asset');
      assert.equal(document.paths['/docs/changelog']?.get?.operationId, 'docs.changelog');
    });
  });
}

/** `canon serve` on a free port, in memory, from the CLI at `cli`, killed when the file's process exits. */
function serve(cli: string, cwd: string): ChildProcess {
  return reapOnExit(
    spawn(process.execPath, [cli, 'serve', '--port', '0'], {
      cwd,
      env: {
        ...process.env,
        ...TEST_PROCESS_ENV,
        DATABASE_URL: 'sqlite::memory:',
        CANON_ADMIN_API_KEY: 'ck_docs_banner_admin_key_0123456789',
        CANON_SEED: '0',
        CANON_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

describe('/docs under each versioning strategy', () => {
  for (const strategy of ['path', 'query', 'header', 'media-type', 'date'] as const) {
    it(`${strategy}: each version’s page fetches that version’s OpenAPI document (the URL and headers it names answer it)`, async () => {
      const server = await startServer('inject', { versioning: strategy });
      try {
        for (const version of ['v2', 'v1']) {
          const page = await server.request('GET', `/docs?version=${version}`, PUBLIC);
          assert.equal(page.status, 200, page.text);
          const url = attribute(page.text, 'data-spec-url');
          const headers = JSON.parse(attribute(page.text, 'data-spec-headers')) as Record<string, string>;
          const doc = await server.request('GET', url, { ...PUBLIC, headers });
          assert.equal(doc.status, 200, `${strategy} ${version}: ${url} ${JSON.stringify(headers)}: ${doc.text.slice(0, 200)}`);
          assert.match((doc.body as { info: { version: string } }).info.version, new RegExp(`^${version} `), `${strategy} ${version}`);
        }
      } finally {
        await server.close();
      }
    });
  }
});

describe('canon serve', () => {
  it('prints the docs URL in its start banner, and the URL serves the reference', async () => {
    // In a folder of its own: nothing it might write lands in the checkout.
    const cwd = mkdtempSync(join(tmpdir(), 'canon-docs-banner-'));
    const child = serve(CLI, cwd);
    try {
      let output = '';
      const docsUrl = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`canon serve printed no docs URL in 20 s:\n${output}`)), 20_000);
        const onData = (d: Buffer): void => {
          output += d.toString();
          const m = /^Canon is serving (http:\/\/\S+)\/v2 [^\n]*\n {2}health: \1\/healthz\n {2}docs: (\S+)\n/m.exec(output);
          if (m) {
            clearTimeout(timer);
            assert.equal(m[2], `${m[1]}/docs`);
            resolve(m[2]!);
          }
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`canon exited with ${code}:\n${output}`));
        });
      });
      const res = await fetch(docsUrl, { headers: { accept: 'text/html' }, signal: AbortSignal.timeout(20_000) });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.match(await res.text(), /data-spec-url="\/v2\/openapi\.json"/);
    } finally {
      const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(kill);
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe('a build without the renderer', () => {
  it('starts, logs where it looked, and answers /docs and the bundle 503 in the error body (no path disclosed); the page’s own files are served', async () => {
    // The compiled server alone, beside a node_modules with every package but redoc, and no dist/assets: what a
    // package packed without scripts/build.mjs would be.
    const root = mkdtempSync(join(tmpdir(), 'canon-docs-norenderer-'));
    let child: ReturnType<typeof spawn> | undefined;
    try {
      for (const part of ['dist/src', 'dist/examples']) cpSync(join(ROOT, part), join(root, part), { recursive: true });
      cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
      mkdirSync(join(root, 'node_modules'));
      for (const name of readdirSync(join(ROOT, 'node_modules'))) if (name !== 'redoc') symlinkSync(join(ROOT, 'node_modules', name), join(root, 'node_modules', name));
      child = serve(join(root, 'dist/src/cli/main.js'), root);
      let output = '';
      const base = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`canon did not start in 20 s:\n${output}`)), 20_000);
        const onData = (d: Buffer): void => {
          output += d.toString();
          const m = /Canon is serving (http:\/\/[^/\s]+)/.exec(output);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        };
        child!.stdout!.on('data', onData);
        child!.stderr!.on('data', onData);
        child!.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`canon exited with ${code}:\n${output}`));
        });
      });
      assert.match(output, /the \/docs renderer is missing \(build with npm run build\): \/docs answers 503/);
      assert.ok(output.includes(`${root}/dist/assets/redoc.standalone.js`), output);
      for (const path of ['/docs', '/docs/assets/redoc.standalone.js', '/docs/assets/redoc.LICENSE']) {
        const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(20_000) });
        const text = await res.text();
        assert.equal(res.status, 503, path);
        const body = JSON.parse(text) as { error: { code: string; message: string } };
        assert.equal(body.error.code, 'SERVICE_UNAVAILABLE');
        assert.equal(body.error.message, 'The reference renderer is not part of this build of the server (its log says where it was looked for).');
      }
      assert.equal((await fetch(`${base}/docs/assets/docs.js`, { signal: AbortSignal.timeout(20_000) })).status, 200);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const kill = setTimeout(() => child!.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(kill);
      }
      rmSync(root, { recursive: true, force: true });
    }
  });
});
