// The webhook retry schedule (DESIGN §9): delays before each attempt, ±20 % jitter, Retry-After (RFC 9110 §10.2.3) honoured up to a cap.

/** Seconds before each attempt, the first included: 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 24 h (DESIGN §9; 9 attempts over about 51.6 h). */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = Object.freeze([0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000, 86_400]);

const MAX_ATTEMPTS = 50;
/** A receiver's Retry-After may push the next attempt back by at most this much, so it cannot park a delivery forever. */
const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;
const JITTER = 0.2;
const DECIMAL = /^\d+(?:\.\d+)?$/;

/**
 * CANON_WEBHOOK_RETRY_SCHEDULE: comma-separated non-negative seconds (decimals allowed, `0,0.2,0.5`), one per
 * attempt, 1 to 50 of them. Throws an Error naming the bad entry.
 */
export function parseRetrySchedule(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length === 1 && parts[0] === '') throw new Error('CANON_WEBHOOK_RETRY_SCHEDULE lists at least one delay (seconds before each attempt, e.g. "0,5,300")');
  if (parts.length > MAX_ATTEMPTS) throw new Error(`CANON_WEBHOOK_RETRY_SCHEDULE lists at most ${MAX_ATTEMPTS} delays, not ${parts.length}`);
  return parts.map((part, i) => {
    const seconds = Number(part);
    if (!DECIMAL.test(part) || !Number.isFinite(seconds)) {
      throw new Error(`CANON_WEBHOOK_RETRY_SCHEDULE entry ${i + 1} ("${part}") is not a non-negative number of seconds`);
    }
    return seconds;
  });
}

/**
 * Milliseconds to wait before the next attempt once `attemptsMade` (≥ 1) attempts have failed, or null when the
 * schedule is exhausted (the delivery is then failed). The scheduled delay is spread uniformly over ±20 % so
 * deliveries that failed together (a receiver outage) do not all come back in the same second. A receiver's
 * Retry-After (seconds) is a floor on the delay, itself capped at 24 h; the schedule's own delays are not capped.
 */
export function nextAttemptDelayMs(schedule: readonly number[], attemptsMade: number, random: () => number, retryAfterSeconds?: number): number | null {
  if (!Number.isSafeInteger(attemptsMade) || attemptsMade < 1) throw new RangeError(`attemptsMade is a whole number ≥ 1, not ${attemptsMade}`);
  const scheduled = schedule[attemptsMade];
  if (scheduled === undefined) return null;
  const jittered = scheduled * 1000 * (1 - JITTER + 2 * JITTER * random());
  const floor = retryAfterSeconds !== undefined && retryAfterSeconds > 0 ? Math.min(retryAfterSeconds, MAX_RETRY_AFTER_SECONDS) * 1000 : 0;
  return Math.round(Math.max(jittered, floor));
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
/** RFC 9110 §5.6.7, the three HTTP-date forms a recipient must accept: IMF-fixdate, then the obsolete rfc850-date and asctime-date. */
const IMF_FIXDATE = new RegExp(`^(?:${DAYS.join('|')}), (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^(?:Sunday|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^(?:${DAYS.join('|')}) ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

/** Milliseconds since the epoch of a valid calendar date and time (no 31 February, no hour 25), else undefined. */
function utc(year: number, month: number, day: number, hour: number, minute: number, second: number): number | undefined {
  // RFC 9110 §5.6.7 allows second 60 (a leap second); Date has none, so it counts as the next second.
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, 0) + second * 1000;
  const date = new Date(Date.UTC(year, month, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month && date.getUTCDate() === day ? ms : undefined;
}

function httpDate(value: string, now: number): number | undefined {
  let m = IMF_FIXDATE.exec(value);
  if (m) return utc(Number(m[3]), MONTHS.indexOf(m[2]!), Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  m = ASCTIME_DATE.exec(value);
  if (m) return utc(Number(m[6]), MONTHS.indexOf(m[1]!), Number(m[2]!.trim()), Number(m[3]), Number(m[4]), Number(m[5]));
  m = RFC850_DATE.exec(value);
  if (m) {
    // RFC 9110 §5.6.7: a two-digit year that looks more than 50 years in the future is the latest past year with those digits.
    const thisYear = new Date(now).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    return utc(year, MONTHS.indexOf(m[2]!), Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  return undefined;
}

/**
 * A Retry-After header (RFC 9110 §10.2.3: `HTTP-date / delay-seconds`) as seconds from `now` (ms since the
 * epoch), never below 0; undefined when it is absent or not one of those forms.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  // delay-seconds = 1*DIGIT
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isFinite(seconds) ? seconds : undefined;
  }
  const at = httpDate(text, now);
  return at === undefined ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
