// Issue 27.7: /docs opened in headless Chromium (Debian's package) on a real listening server: the operations render, no request leaves loopback, no console error, the switcher shows v1's shapes; screenshots kept in test-artifacts/.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startServer, type TestServer } from '../../support/harness.js';

const CHROMIUM = '/usr/bin/chromium';
/** Where screenshots go: git-ignored (.gitignore), kept after the run for people to look at. */
const ARTIFACTS = fileURLToPath(new URL('../../../../test-artifacts/', import.meta.url));
/** Quiet, loopback-only Chromium: no first-run, sync, component updates or background requests of its own. */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** Generous bounds for a loaded machine: launching Chromium, and Redoc parsing and rendering a large document. */
const LAUNCH_MS = 45_000;
const RENDER_MS = 60_000;
const PRODUCTS_LIST_SUMMARY = 'Lists products the caller may see, a page at a time';

describe('/docs in headless Chromium', () => {
  let server: TestServer;
  let context: BrowserContext | undefined;
  let profile = '';
  const requests: string[] = [];
  const problems: string[] = [];

  before(async () => {
    // Not a skip: CI installs it (.ci/run), and a reference nobody opened is not tested.
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y --no-install-recommends chromium); .ci/run does`);
    server = await startServer('listen');
    profile = mkdtempSync(join(tmpdir(), 'canon-chromium-'));
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, timeout: LAUNCH_MS, viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(RENDER_MS);
    context.on('request', (request) => requests.push(request.url()));
    context.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()} (${message.location().url})`);
    });
    context.on('weberror', (error) => problems.push(`page error: ${error.error().message}`));
  });

  after(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await server?.close();
  });

  /** Opens `path` and waits until Redoc has rendered `heading` (an operation's summary) and the network is quiet. */
  async function open(page: Page, path: string, heading: string): Promise<void> {
    const response = await page.goto(`${server.baseUrl}${path}`, { timeout: RENDER_MS });
    assert.equal(response?.status(), 200);
    await page.getByRole('heading', { name: heading }).waitFor({ state: 'visible', timeout: RENDER_MS });
    assert.equal(await page.locator('#redoc').getAttribute('data-canon-state'), 'rendered');
    await page.waitForLoadState('networkidle', { timeout: RENDER_MS });
  }

  function screenshotPath(name: string): string {
    mkdirSync(ARTIFACTS, { recursive: true });
    return join(ARTIFACTS, name);
  }

  it('renders v2’s operations from this server alone, without a console error', async (t) => {
    const page = context!.pages()[0] ?? (await context!.newPage());
    await open(page, '/docs', PRODUCTS_LIST_SUMMARY);
    assert.equal(await page.title(), 'Canon API v2 reference');
    // v2's prices are objects; v1's integer field is nowhere on v2's page.
    assert.equal(await page.getByText('price_cents').count(), 0);
    const shot = screenshotPath('docs-v2.png');
    await page.screenshot({ path: shot, timeout: RENDER_MS });
    t.diagnostic(`screenshot: ${shot}`);

    const { port } = new URL(server.baseUrl!);
    const offHost = requests.filter((url) => {
      const u = new URL(url);
      if (u.protocol === 'data:' || u.protocol === 'blob:') return false;
      return !(u.protocol === 'http:' && (u.hostname === '127.0.0.1' || u.hostname === 'localhost') && u.port === port);
    });
    assert.deepEqual(offHost, [], 'every request goes to this server (or is data:/blob:)');
    const paths = requests.filter((url) => url.startsWith(server.baseUrl!)).map((url) => new URL(url).pathname);
    assert.deepEqual([...new Set(paths)].sort(), ['/docs', '/docs/assets/docs.css', '/docs/assets/docs.js', '/docs/assets/redoc.standalone.js', '/v2/openapi.json']);
    assert.deepEqual(problems, []);
  });

  it('the switcher opens v1, whose schemas carry v1’s fields (price_cents)', async (t) => {
    const page = context!.pages()[0]!;
    const before = requests.length;
    await page.getByRole('link', { name: 'v1 (deprecated)' }).click({ timeout: RENDER_MS });
    await page.waitForURL(`${server.baseUrl}/docs?version=v1`, { timeout: RENDER_MS });
    // v1's summaries may differ from v2's: wait for the page's own document, then for v1's integer price field.
    await page.getByRole('heading', { name: PRODUCTS_LIST_SUMMARY }).waitFor({ state: 'visible', timeout: RENDER_MS });
    await page.locator('#redoc[data-canon-state="rendered"]').waitFor({ timeout: RENDER_MS });
    await page.getByText('price_cents', { exact: true }).filter({ visible: true }).first().waitFor({ state: 'visible', timeout: RENDER_MS });
    await page.waitForLoadState('networkidle', { timeout: RENDER_MS });
    assert.equal(await page.title(), 'Canon API v1 reference');
    assert.equal(await page.locator('nav[aria-label="API version"] a[aria-current="page"]').textContent(), 'v1 (deprecated)');
    const shot = screenshotPath('docs-v1.png');
    await page.screenshot({ path: shot, timeout: RENDER_MS });
    t.diagnostic(`screenshot: ${shot}`);
    const paths = requests.slice(before).map((url) => (url.startsWith('data:') || url.startsWith('blob:') ? url.slice(0, 5) : url.replace(server.baseUrl!, '').split('?')[0]));
    assert.ok(paths.includes('/v1/openapi.json'), paths.join(' '));
    assert.ok(
      paths.every((p) => p === 'data:' || p === 'blob:' || p!.startsWith('/')),
      paths.join(' '),
    );
    assert.deepEqual(problems, []);
  });
});
