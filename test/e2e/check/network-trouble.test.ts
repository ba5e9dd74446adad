// `canon check` never blames a server for the checker's own network trouble: timeouts and resets are `error`, not `fail`.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseCheckArgs } from '../../../src/check/options.js';
import { runCheck } from '../../../src/check/runner.js';
import type { CheckOptions, Report } from '../../../src/check/types.js';
import { startTroubled, type FixtureServer } from '../../support/check-servers.js';

describe('canon check with network trouble', () => {
  let server: FixtureServer;
  let report: Report;
  let ms = 0;

  before(async () => {
    server = await startTroubled();
    const started = Date.now();
    report = await runCheck(parseCheckArgs([server.url, '--path', '/things', '--timeout', '400', '--rate', '500']) as CheckOptions);
    ms = Date.now() - started;
  });
  after(() => server.close());

  it('reports resets and timeouts as errors and fails nothing', () => {
    assert.equal(report.summary.fail, 0, JSON.stringify(report.rules.filter((r) => r.status === 'fail')));
    const options = report.rules.find((r) => r.id === 'methods.options')!;
    assert.equal(options.status, 'error');
    assert.equal(options.summary, 'connection reset by the server');
    assert.deepEqual(options.evidence, [{ request: 'OPTIONS /things', note: 'connection reset by the server' }]);
    const etag = report.rules.find((r) => r.id === 'caching.etag')!;
    assert.equal(etag.status, 'error');
    assert.equal(etag.summary, 'no answer within 0.4 s (timeout)');
    assert.deepEqual(etag.evidence, [{ request: 'GET /things/a', note: 'no answer within 0.4 s (timeout)' }]);
    // What needed only the page that did answer is judged: it is a bounded page.
    assert.equal(report.rules.find((r) => r.id === 'pagination.bounded')!.status, 'pass');
    assert.ok(report.summary.error >= 10, `${report.summary.error} errors`);
  });

  it('stays bounded in time: the hanging item is asked for once per probe kind, each within the timeout', () => {
    assert.ok(ms < 15_000, `${ms} ms`);
    assert.ok(server.requests.filter((r) => r === 'GET /things/a').length <= 2);
  });

  it('reports a server that is not there as errors of every collection rule', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const gone = await runCheck(parseCheckArgs([`http://127.0.0.1:${port}`, '--path', '/things', '--timeout', '400']) as CheckOptions);
    assert.equal(gone.summary.fail, 0);
    const etag = gone.rules.find((r) => r.id === 'caching.etag')!;
    assert.equal(etag.status, 'error');
    assert.match(etag.summary, /^discovery failed: GET \/\S*: connection refused$/);
    assert.deepEqual(gone.discovery.collections, []);
  });
});
