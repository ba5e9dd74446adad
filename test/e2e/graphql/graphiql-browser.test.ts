// Issue 29.7: GraphiQL at GET /graphql opened in headless Chromium (Debian's package) on a real listening server: it loads from this server alone, runs a typed query with an API key typed into its Headers tab, and as a logged-in browser with the session's CSRF token; with introspection off it still loads and shows why.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext, type Page, type Request } from 'playwright-core';
import { createCustomer, createProduct, startServer, type TestServer } from '../../support/harness.js';

const CHROMIUM = '/usr/bin/chromium';
/** Where screenshots go: git-ignored (.gitignore), kept after the run for people to look at. */
const ARTIFACTS = fileURLToPath(new URL('../../../../test-artifacts/', import.meta.url));
/** Quiet, loopback-only Chromium: no first-run, sync, component updates or background requests of its own. */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** Generous bounds for a loaded machine: launching Chromium, and parsing GraphiQL's 3.5 MB bundle. */
const LAUNCH_MS = 45_000;
const RENDER_MS = 60_000;
const PRODUCT = 'Graphiql Teapot';
const PASSWORD = 'long enough password';
/** Typed into the query editor (inserted as text: typed key by key, the editor would close each brace itself). */
const QUERY = '{ products(first: 10) { edges { node { name price { amount currency } } } } }';
/** The page and every file it loads, in no particular order. */
const PAGE_FILES = [
  '/graphql',
  '/graphql/assets/graphiql-page.css',
  '/graphql/assets/graphiql-page.js',
  '/graphql/assets/graphiql.min.css',
  '/graphql/assets/graphiql.min.js',
  '/graphql/assets/react-dom.production.min.js',
  '/graphql/assets/react.production.min.js',
];
/** What Chromium itself logs for a response with an error status: the server's answer, not a fault of the page. */
const STATUS_LOG = /^Failed to load resource: the server responded with a status of (\d{3}) /;

interface Seen {
  requests: Request[];
  /** Page errors and console errors, but Chromium's own line for an error status (kept in `statuses`). */
  problems: string[];
  statuses: number[];
}

function screenshotPath(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}

/** A fresh browser profile recording every request, console error and page error. */
async function launch(): Promise<{ context: BrowserContext; seen: Seen; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'canon-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    timeout: LAUNCH_MS,
    viewport: { width: 1280, height: 900 },
  });
  context.setDefaultTimeout(RENDER_MS);
  const seen: Seen = { requests: [], problems: [], statuses: [] };
  context.on('request', (request) => seen.requests.push(request));
  context.on('console', (message) => {
    if (message.type() !== 'error') return;
    const status = STATUS_LOG.exec(message.text());
    if (status) seen.statuses.push(Number(status[1]));
    else seen.problems.push(`console error: ${message.text()} (${message.location().url})`);
  });
  context.on('weberror', (error) => seen.problems.push(`page error: ${error.error().message}`));
  return {
    context,
    seen,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Requests to anything but `server` (data: and blob: URLs are the page's own). */
function offHost(seen: Seen, server: TestServer): string[] {
  const { port } = new URL(server.baseUrl!);
  return seen.requests
    .map((r) => r.url())
    .filter((url) => {
      const u = new URL(url);
      if (u.protocol === 'data:' || u.protocol === 'blob:') return false;
      return !(u.protocol === 'http:' && u.hostname === '127.0.0.1' && u.port === port);
    });
}

/** Opens /graphql and waits until GraphiQL is on the page and its first schema request has been answered. */
async function open(page: Page, server: TestServer): Promise<void> {
  const introspected = page.waitForResponse((res) => res.url() === `${server.baseUrl}/graphql` && res.request().method() === 'POST', { timeout: RENDER_MS });
  const response = await page.goto(`${server.baseUrl}/graphql`, { timeout: RENDER_MS });
  assert.equal(response?.status(), 200);
  assert.equal(response?.headers()['content-type'], 'text/html; charset=utf-8');
  await page.locator('.graphiql-container').waitFor({ state: 'visible', timeout: RENDER_MS });
  assert.equal(await page.locator('#graphiql').getAttribute('data-canon-state'), 'rendered');
  await introspected;
}

/** Replaces the text of the visible CodeMirror editor inside `container` with `text` (the Variables and Headers editors share one section). */
async function fill(page: Page, container: string, text: string): Promise<void> {
  await page.locator(`${container} .CodeMirror`).filter({ visible: true }).first().click({ timeout: RENDER_MS });
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(text);
}

/** Runs the query editor's operation and waits until the result pane shows `expected`; returns the POST it sent and the answer's body. */
async function run(page: Page, server: TestServer, expected: string): Promise<{ sent: Request; answer: unknown }> {
  const answered = page.waitForResponse((res) => res.url() === `${server.baseUrl}/graphql` && res.request().method() === 'POST', { timeout: RENDER_MS });
  await page.locator('.graphiql-execute-button').click({ timeout: RENDER_MS });
  const response = await answered;
  assert.equal(response.status(), 200);
  await page.locator('.result-window').getByText(expected).first().waitFor({ state: 'visible', timeout: RENDER_MS });
  return { sent: response.request(), answer: await response.json() };
}

describe(
  'GraphiQL in headless Chromium',
  { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y --no-install-recommends chromium)` },
  () => {
    let server: TestServer;
    let customer: { userId: string; key: string };
    let browser: Awaited<ReturnType<typeof launch>> | undefined;

    before(async () => {
      server = await startServer('listen');
      await createProduct(server, { name: PRODUCT });
      customer = await createCustomer(server, 'graphiql@example.com');
      browser = await launch();
    });

    after(async () => {
      await browser?.close();
      await server?.close();
    });

    it('loads from this server alone; without credentials the result pane shows UNAUTHENTICATED', async (t) => {
      const { context, seen } = browser!;
      const page = context.pages()[0] ?? (await context.newPage());
      await open(page, server);
      await page.locator('.result-window').getByText('UNAUTHENTICATED').first().waitFor({ state: 'visible', timeout: RENDER_MS });
      const shot = screenshotPath('graphiql-anonymous.png');
      await page.screenshot({ path: shot, timeout: RENDER_MS });
      t.diagnostic(`screenshot: ${shot}`);

      assert.deepEqual(offHost(seen, server), [], 'every request goes to this server (or is data:/blob:)');
      const paths = new Set(seen.requests.map((r) => new URL(r.url()).pathname));
      // The page's files, the session asked for its CSRF token (none: 401), the schema asked for (401).
      assert.deepEqual([...paths].sort(), [...PAGE_FILES, '/v2/sessions/current'].sort());
      assert.deepEqual(seen.problems, []);
      // Chromium's own lines for the two 401s, nothing else.
      assert.ok(seen.statuses.length > 0 && seen.statuses.every((s) => s === 401), String(seen.statuses));
    });

    it('runs a query typed into the editor with an X-API-Key typed into the Headers tab, and keeps the key out of localStorage', async (t) => {
      const { context, seen } = browser!;
      const page = context.pages()[0]!;
      const before = { problems: seen.problems.length, statuses: seen.statuses.length };
      await page.locator('.graphiql-editor-tools button[data-name="headers"]').click({ timeout: RENDER_MS });
      await fill(page, 'section.graphiql-editor-tool[aria-label="Headers"]', `{"X-API-Key": "${customer.key}"}`);
      await fill(page, '.graphiql-query-editor', QUERY);
      const { sent, answer } = await run(page, server, PRODUCT);
      const shot = screenshotPath('graphiql-api-key.png');
      await page.screenshot({ path: shot, timeout: RENDER_MS });
      t.diagnostic(`screenshot: ${shot}`);

      const headers = await sent.allHeaders();
      assert.equal(headers['x-api-key'], customer.key);
      assert.equal(headers['x-csrf-token'], undefined, 'a key is not CSRF-checked: no session token asked for');
      assert.match(headers['content-type']!, /^application\/json/);
      assert.deepEqual(JSON.parse(sent.postData()!), { query: QUERY });
      assert.deepEqual(answer, { data: { products: { edges: [{ node: { name: PRODUCT, price: { amount: 1000, currency: 'EUR' } } }] } } });
      const stored = await page.evaluate<string>('JSON.stringify(Object.fromEntries(Object.entries(localStorage)))');
      assert.ok(stored.includes('products(first: 10)'), 'the query is kept for the next visit');
      assert.ok(!stored.includes(customer.key), 'the key is not');
      assert.deepEqual(seen.problems.slice(before.problems), []);
      assert.deepEqual(seen.statuses.slice(before.statuses), []);
      assert.deepEqual(offHost(seen, server), []);
    });

    it('runs as the browser’s session: the page reads the session’s CSRF token and sends it, with no console error at all', async (t) => {
      const { context, seen } = browser!;
      // The login a browser makes: its cookie lands in this profile's cookie jar.
      const login = await context.request.post(`${server.baseUrl}/v2/sessions`, { data: { email: 'graphiql@example.com', password: PASSWORD }, timeout: RENDER_MS });
      assert.equal(login.status(), 201, await login.text());
      const { csrf_token: token } = (await login.json()) as { csrf_token: string };
      const page = context.pages()[0]!;
      const before = { problems: seen.problems.length, statuses: seen.statuses.length, requests: seen.requests.length };
      await open(page, server);
      // The schema came (the docs explorer lists the root type), and the Headers tab is empty again.
      await page.locator('.graphiql-sidebar button[aria-label="Show Documentation Explorer"]').click({ timeout: RENDER_MS });
      await page.locator('.graphiql-doc-explorer').getByText('Query', { exact: true }).first().waitFor({ state: 'visible', timeout: RENDER_MS });
      await fill(page, '.graphiql-query-editor', QUERY);
      const { sent } = await run(page, server, PRODUCT);
      const shot = screenshotPath('graphiql-session.png');
      await page.screenshot({ path: shot, timeout: RENDER_MS });
      t.diagnostic(`screenshot: ${shot}`);

      const headers = await sent.allHeaders();
      assert.equal(headers['x-api-key'], undefined, 'the key typed before was not kept');
      assert.equal(headers['x-csrf-token'], token);
      assert.match(headers.cookie ?? '', /canon_session=/);
      const sessionReads = seen.requests.slice(before.requests).filter((r) => new URL(r.url()).pathname === '/v2/sessions/current');
      assert.equal(sessionReads.length, 1, 'the token is read once per page');
      assert.deepEqual(seen.problems.slice(before.problems), []);
      assert.deepEqual(seen.statuses.slice(before.statuses), []);
      assert.deepEqual(offHost(seen, server), []);
    });
  },
);

describe('GraphiQL with introspection off (production)', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing` }, () => {
  let server: TestServer;
  let browser: Awaited<ReturnType<typeof launch>> | undefined;

  before(async () => {
    server = await startServer('listen', { graphqlIntrospection: false });
    await createProduct(server, { name: PRODUCT });
    await createCustomer(server, 'graphiql@example.com');
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('still loads as a logged-in browser, shows why there is no schema, and runs a query', async (t) => {
    const { context, seen } = browser!;
    const login = await context.request.post(`${server.baseUrl}/v2/sessions`, { data: { email: 'graphiql@example.com', password: PASSWORD }, timeout: RENDER_MS });
    assert.equal(login.status(), 201, await login.text());
    const page = context.pages()[0] ?? (await context.newPage());
    await open(page, server);
    const pane = page.locator('.result-window');
    await pane.getByText('GRAPHQL_VALIDATION_FAILED').first().waitFor({ state: 'visible', timeout: RENDER_MS });
    assert.match(await pane.innerText({ timeout: RENDER_MS }), /introspection/i);
    const shot = screenshotPath('graphiql-no-introspection.png');
    await page.screenshot({ path: shot, timeout: RENDER_MS });
    t.diagnostic(`screenshot: ${shot}`);
    // The query runs without a schema (nothing to check it against in the browser: the server does).
    await fill(page, '.graphiql-query-editor', QUERY);
    await run(page, server, PRODUCT);
    assert.deepEqual(seen.problems, []);
    // Chromium's own lines for the refused schema requests (400 under application/graphql-response+json), nothing else.
    assert.ok(
      seen.statuses.every((s) => s === 400),
      String(seen.statuses),
    );
    assert.deepEqual(offHost(seen, server), []);
  });
});
