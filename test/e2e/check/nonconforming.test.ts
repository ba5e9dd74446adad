// `canon check` against a server that breaks chosen conventions (test/support/check-servers.ts): exactly those rules fail, with evidence.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseCheckArgs } from '../../../src/check/options.js';
import { runCheck } from '../../../src/check/runner.js';
import type { CheckOptions, Report, RuleResult } from '../../../src/check/types.js';
import { FIXTURE_ITEMS, FIXTURE_KEY, startNonConforming, type FixtureServer } from '../../support/check-servers.js';

const BROKEN = [
  'errors.body',
  'pagination.bounded',
  'pagination.max-limit',
  'query.unknown-filter',
  'query.unknown-sort',
  'query.unknown-fields',
  'caching.etag',
  'ratelimit.headers',
];

describe('canon check on a non-conforming server', () => {
  let server: FixtureServer & { count(): number };
  let report: Report;
  const rule = (id: string): RuleResult => report.rules.find((r) => r.id === id)!;

  before(async () => {
    server = await startNonConforming();
    const options = parseCheckArgs([server.url, '--header', `X-API-Key: ${FIXTURE_KEY}`, '--path', '/widgets', '--rate', '500']) as CheckOptions;
    report = await runCheck(options);
  });
  after(() => server.close());

  it('fails exactly the rules the server breaks, and no rule errs', () => {
    assert.deepEqual(
      report.rules.filter((r) => r.status === 'fail').map((r) => r.id),
      BROKEN,
    );
    assert.equal(report.summary.error, 0);
    assert.equal(report.summary.fail, BROKEN.length);
    // What it does follow passes: OPTIONS, 405, 404, 400, 406, 401 and Cache-Control.
    for (const id of [
      'methods.options',
      'methods.not-allowed',
      'status.not-found',
      'status.bad-request',
      'status.not-acceptable',
      'status.unauthorized',
      'caching.cache-control',
    ]) {
      assert.equal(rule(id).status, 'pass', `${id}: ${rule(id).summary}`);
    }
  });

  it('shows the plain-text error bodies', () => {
    const r = rule('errors.body');
    assert.match(r.summary, /^6 of 6 error answers lack the error object$/);
    const notFound = r.evidence.find((e) => e.status === 404)!;
    assert.match(notFound.note, /^Content-Type text\/plain, body "Not Found"$/);
    assert.deepEqual(r.evidence.map((e) => e.status).sort(), [400, 401, 404, 404, 405, 406]);
  });

  it('shows the unbounded list and the ignored page sizes', () => {
    assert.equal(rule('pagination.bounded').summary, `${FIXTURE_ITEMS} items in one answer`);
    assert.deepEqual(rule('pagination.bounded').evidence[0], { request: 'GET /widgets', status: 200, note: `${FIXTURE_ITEMS} items, no pagination fields or links` });
    assert.equal(rule('pagination.max-limit').summary, 'limit=100000 answered 200, not 400');
    // No style is offered (every parameter is ignored), so the shape and link rules have nothing to judge.
    assert.equal(rule('pagination.next').summary, 'the page of 2 has no pagination fields to follow (see pagination.shape)');
    assert.equal(rule('pagination.shape').status, 'not-applicable');
    assert.equal(rule('pagination.cursor-tamper').status, 'not-applicable');
  });

  it('shows the 200 on unknown filter, sort and fields', () => {
    assert.deepEqual(rule('query.unknown-filter').evidence, [{ request: 'GET /widgets?canon_check_no_such_field=x', status: 200, note: 'the unknown filter field was ignored' }]);
    assert.equal(rule('query.unknown-sort').summary, 'an unknown sort field answered 200, not 400');
    assert.equal(rule('query.unknown-fields').summary, 'an unknown fields entry answered 200, not 400');
  });

  it('shows the missing ETag and rate-limit headers', () => {
    assert.deepEqual(rule('caching.etag').evidence, [{ request: 'GET /widgets/w1', status: 200, note: 'no ETag' }]);
    assert.equal(rule('caching.not-modified').status, 'not-applicable');
    assert.match(rule('ratelimit.headers').summary, /^\/widgets: no x-ratelimit-limit, no x-ratelimit-remaining, no x-ratelimit-reset; /);
  });

  it('makes no write without --write, and its write rules say why they did not run', () => {
    assert.deepEqual(
      server.requests.filter((r) => !/^(GET|OPTIONS|PUT) /.test(r)),
      [],
    );
    // The one PUT is the 405 probe: a method the server's Allow leaves out.
    assert.deepEqual(
      server.requests.filter((r) => r.startsWith('PUT')),
      ['PUT /widgets'],
    );
    for (const id of ['methods.create-delete', 'idempotency.replay', 'caching.precondition']) assert.match(rule(id).summary, /^runs only with --write/);
    assert.equal(report.requests, server.requests.length);
  });

  it('with --write, fails the write rules it breaks, and deletes every object it created', async () => {
    const options = parseCheckArgs([
      server.url,
      '--header',
      `X-API-Key: ${FIXTURE_KEY}`,
      '--path',
      '/widgets',
      '--rate',
      '500',
      '--write',
      '--only',
      'methods.create-delete,status.unsupported-media-type,caching.precondition,idempotency',
    ]) as CheckOptions;
    const writes = await runCheck(options);
    assert.deepEqual(
      writes.rules.map((r) => [r.id, r.status, r.summary]),
      [
        ['methods.create-delete', 'fail', 'no Location header'],
        ['status.unsupported-media-type', 'pass', '415 for text/plain'],
        ['caching.precondition', 'not-applicable', 'the items have no ETag, so If-Match has nothing to compare (see caching.etag)'],
        ['idempotency.replay', 'fail', 'the repeat created a second object'],
        ['idempotency.mismatch', 'fail', 'a reused key with another body answered 201, not 422'],
        ['idempotency.in-flight', 'fail', 'two objects were created for one key'],
      ],
    );
    // Created: the discovery try, create-delete, two per idempotency rule. Every one deleted, at its id's URL.
    assert.equal(writes.cleanup.length, 8);
    for (const e of writes.cleanup) {
      assert.match(e.request, /^DELETE \/widgets\/w\d+$/);
      assert.equal(e.status, 204);
    }
    assert.equal(server.count(), FIXTURE_ITEMS);
  });
});
