// The `canon check` command: exit 0 when no rule fails, 1 when one does, 2 on bad usage; --json on stdout, progress on stderr.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { checkCommand } from '../../../src/check/command.js';
import type { Report } from '../../../src/check/types.js';
import { FIXTURE_KEY, startNonConforming, type FixtureServer } from '../../support/check-servers.js';
import { ADMIN_KEY, startServer, createProduct, type TestServer } from '../../support/harness.js';

/** A writable stream that keeps what it is given. */
class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

function canon(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('canon check (the command)', () => {
  let fixture: FixtureServer;
  let server: TestServer;

  before(async () => {
    fixture = await startNonConforming();
    server = await startServer('listen');
    for (let i = 0; i < 3; i++) await createProduct(server, { name: `Product ${i}` });
  });
  after(async () => {
    await fixture.close();
    await server.close();
  });

  it('exits 1 when a rule fails, with the JSON report on stdout and progress on stderr', async () => {
    const run = await canon(['check', fixture.url, '--header', `X-API-Key: ${FIXTURE_KEY}`, '--path', '/widgets', '--only', 'errors.body,caching', '--json']);
    assert.equal(run.code, 1, run.stderr);
    const report = JSON.parse(run.stdout) as Report;
    assert.deepEqual(
      report.rules.map((r) => [r.id, r.status]),
      [
        ['errors.body', 'fail'],
        ['caching.etag', 'fail'],
        ['caching.not-modified', 'not-applicable'],
        ['caching.cache-control', 'pass'],
        ['caching.precondition', 'not-applicable'],
      ],
    );
    assert.deepEqual(report.summary, { pass: 1, fail: 2, 'not-applicable': 2, error: 0 });
    assert.match(run.stderr, /^canon check: \[1\/5\] errors\.body$/m);
  });

  it('exits 0 when nothing fails, and the text report ends with the summary line', async () => {
    const run = await canon(['check', server.baseUrl!, '--header', `X-API-Key: ${ADMIN_KEY}`, '--path', '/v2/products', '--only', 'status,errors']);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^PASS {2}status\.not-found {2}An unknown id and an unknown path answer 404$/m);
    assert.match(run.stdout, /\n6 passed, 0 failed, 1 not applicable, 0 errors — \d+ requests in [\d.]+ s\n$/);
    assert.ok(!run.stdout.includes('\u001b['), 'no colour when stdout is not a terminal');
  });

  it('exits 2 with a clear message on bad usage', async () => {
    // In process (checkCommand is what `canon check` runs): a process per case would cost seconds for nothing.
    for (const [args, message] of [
      [['check'], 'the base URL is missing'],
      [['check', 'ftp://example.com'], 'the base URL must be http:// or https://, got ftp:'],
      [['check', 'http://127.0.0.1:1', '--only', 'pagination.nope'], 'unknown rule id pagination.nope (docs/check.md lists them)'],
      [['check', 'http://127.0.0.1:1', '--header', 'no colon'], `--header must be 'Name: value', got "no colon"`],
      [['check', 'http://127.0.0.1:1', '--max-requests', '0'], '--max-requests must be a positive integer, got "0"'],
    ] as const) {
      const out = new Sink();
      const err = new Sink();
      assert.equal(await checkCommand(args.slice(1), { stdout: out, stderr: err }), 2, args.join(' '));
      assert.equal(err.text.split('\n')[0], `canon check: ${message}`);
      assert.match(err.text, /\nusage: canon check <base-url> \[options\]\n/);
      assert.equal(out.text, '');
    }
  });
});
