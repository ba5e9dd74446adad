// Issue 15 (DESIGN §9): the webhook retry schedule, CANON_WEBHOOK_RETRY_SCHEDULE, ±20 % jitter, and Retry-After (RFC 9110 §10.2.3) honoured up to 24 h.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_RETRY_SCHEDULE, nextAttemptDelayMs, parseRetryAfter, parseRetrySchedule } from '../../../src/webhooks/retry-schedule.js';

const HOUR = 3600;
const DAY = 24 * HOUR;
const ALMOST_ONE = 1 - Number.EPSILON;

describe('DEFAULT_RETRY_SCHEDULE', () => {
  it('is DESIGN §9: 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 24 h', () => {
    assert.deepEqual(DEFAULT_RETRY_SCHEDULE, [0, 5, 300, 1800, 7200, 18000, 36000, 36000, 86400]);
    assert.equal(
      DEFAULT_RETRY_SCHEDULE.reduce((a, b) => a + b, 0),
      185_705,
    );
    assert.ok(Object.isFrozen(DEFAULT_RETRY_SCHEDULE));
  });
});

describe('parseRetrySchedule', () => {
  const good: Array<[string, number[]]> = [
    ['0,5,300', [0, 5, 300]],
    ['0,0.2,0.5', [0, 0.2, 0.5]],
    [' 1 , 2 ,3 ', [1, 2, 3]],
    ['7', [7]],
    ['0', [0]],
    [Array(50).fill('1').join(','), Array(50).fill(1)],
  ];
  for (const [text, schedule] of good) it(`reads ${JSON.stringify(text.length > 20 ? `${text.slice(0, 20)}…` : text)}`, () => assert.deepEqual(parseRetrySchedule(text), schedule));

  const bad: Array<[string, RegExp]> = [
    ['', /at least one/],
    ['   ', /at least one/],
    ['0,,5', /entry 2 \(""\)/],
    ['0,5,', /entry 3/],
    ['-1', /entry 1 \("-1"\) is not a non-negative number/],
    ['0,abc', /entry 2 \("abc"\)/],
    ['1e3', /entry 1/],
    ['0x10', /entry 1/],
    ['.5', /entry 1/],
    ['5.', /entry 1/],
    ['Infinity', /entry 1/],
    ['NaN', /entry 1/],
    ['1 2', /entry 1/],
    ['1;2', /entry 1/],
    ['9'.repeat(400), /entry 1/],
    [Array(51).fill('1').join(','), /at most 50 delays, not 51/],
  ];
  for (const [text, message] of bad) it(`refuses ${JSON.stringify(text.slice(0, 20))}`, () => assert.throws(() => parseRetrySchedule(text), message));
});

describe('nextAttemptDelayMs', () => {
  const schedule = DEFAULT_RETRY_SCHEDULE;

  it('after n attempts waits the (n+1)th delay; null once the schedule is exhausted', () => {
    assert.equal(
      nextAttemptDelayMs(schedule, 1, () => 0.5),
      5000,
    );
    assert.equal(
      nextAttemptDelayMs(schedule, 2, () => 0.5),
      300_000,
    );
    assert.equal(
      nextAttemptDelayMs(schedule, 8, () => 0.5),
      86_400_000,
    );
    assert.equal(
      nextAttemptDelayMs(schedule, 9, () => 0.5),
      null,
    );
    assert.equal(
      nextAttemptDelayMs(schedule, 10, () => 0.5),
      null,
    );
    assert.equal(
      nextAttemptDelayMs([0], 1, () => 0.5),
      null,
    );
    assert.equal(
      nextAttemptDelayMs([0, 0.2, 0.5], 1, () => 0.5),
      200,
    );
  });

  it('jitters ±20 % of the scheduled delay, uniformly from random()', () => {
    assert.equal(
      nextAttemptDelayMs(schedule, 2, () => 0),
      240_000,
    );
    const top = nextAttemptDelayMs(schedule, 2, () => ALMOST_ONE)!;
    assert.ok(top <= 360_000 && top > 359_999, String(top));
    assert.equal(
      nextAttemptDelayMs(schedule, 2, () => 0.25),
      270_000,
    );
    for (let attempts = 1; attempts < schedule.length; attempts++) {
      for (const r of [0, 0.1, 0.5, 0.9, ALMOST_ONE]) {
        const delay = nextAttemptDelayMs(schedule, attempts, () => r)!;
        const base = schedule[attempts]! * 1000;
        assert.ok(delay >= Math.floor(base * 0.8) && delay <= Math.ceil(base * 1.2), `${attempts}: ${delay} vs ${base}`);
      }
    }
  });

  it('a zero delay stays zero', () =>
    assert.equal(
      nextAttemptDelayMs([0, 0], 1, () => ALMOST_ONE),
      0,
    ));

  it('honours Retry-After as a floor on the delay', () => {
    assert.equal(
      nextAttemptDelayMs(schedule, 1, () => 0.5, 120),
      120_000,
    );
    // A Retry-After shorter than the scheduled delay does not bring the attempt forward.
    assert.equal(
      nextAttemptDelayMs(schedule, 2, () => 0.5, 10),
      300_000,
    );
    assert.equal(
      nextAttemptDelayMs(schedule, 1, () => 0.5, 0),
      5000,
    );
  });

  it('caps Retry-After at 24 h, so a receiver cannot park a delivery forever', () => {
    assert.equal(
      nextAttemptDelayMs(schedule, 1, () => 0.5, 10 * DAY),
      DAY * 1000,
    );
    assert.equal(
      nextAttemptDelayMs(schedule, 1, () => 0.5, Number.MAX_SAFE_INTEGER),
      DAY * 1000,
    );
    // The schedule's own 24 h step with its jitter is the schedule's business, not a Retry-After.
    assert.equal(
      nextAttemptDelayMs(schedule, 8, () => 0.75, 10 * DAY),
      95_040_000,
    );
  });

  it('still ends when the schedule is exhausted, whatever Retry-After says', () =>
    assert.equal(
      nextAttemptDelayMs(schedule, 9, () => 0.5, 60),
      null,
    ));

  it('refuses an attemptsMade below 1 or not whole', () => {
    assert.throws(() => nextAttemptDelayMs(schedule, 0, () => 0.5), RangeError);
    assert.throws(() => nextAttemptDelayMs(schedule, 1.5, () => 0.5), RangeError);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 2, 1, 12, 0, 0); // Sun, 01 Mar 2026 12:00:00 GMT

  it('reads delay-seconds', () => {
    assert.equal(parseRetryAfter('120', now), 120);
    assert.equal(parseRetryAfter('0', now), 0);
    assert.equal(parseRetryAfter(' 30 ', now), 30);
    assert.equal(parseRetryAfter('999999999', now), 999999999);
  });

  it('reads an IMF-fixdate as the seconds until then', () => {
    assert.equal(parseRetryAfter('Sun, 01 Mar 2026 12:02:00 GMT', now), 120);
    assert.equal(parseRetryAfter('Mon, 02 Mar 2026 12:00:00 GMT', now), DAY);
    assert.equal(parseRetryAfter(new Date(now + 90_500).toUTCString(), now), 90);
  });

  it('rounds a date part of a second ahead up, and a past date to 0', () => {
    assert.equal(parseRetryAfter('Sun, 01 Mar 2026 12:00:01 GMT', now + 200), 1);
    assert.equal(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now), 0);
  });

  it('reads the obsolete rfc850-date and asctime-date forms (RFC 9110 §5.6.7)', () => {
    assert.equal(parseRetryAfter('Sunday, 01-Mar-26 12:01:00 GMT', now), 60);
    assert.equal(parseRetryAfter('Sun Mar  1 12:01:00 2026', now), 60);
    assert.equal(parseRetryAfter('Sun Mar 01 12:01:00 2026', now), 60);
    // A two-digit year more than 50 years ahead is in the past century.
    assert.equal(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now), 0);
  });

  const garbage = [
    undefined,
    '',
    '   ',
    '-5',
    '1.5',
    '+5',
    '1e3',
    'soon',
    '5 seconds',
    'Sun, 01 Mar 2026 12:02:00',
    'Sun, 01 Mar 2026 12:02:00 UTC',
    'Sun, 1 Mar 2026 12:02:00 GMT',
    'Sun, 31 Feb 2026 12:00:00 GMT',
    'Sun, 01 Mar 2026 25:00:00 GMT',
    'Sun, 01 Foo 2026 12:00:00 GMT',
    '2026-03-01T12:02:00Z',
    'Sunday, 01 Mar 2026 12:02:00 GMT',
  ];
  for (const value of garbage) it(`ignores ${JSON.stringify(value)}`, () => assert.equal(parseRetryAfter(value, now), undefined));
});
