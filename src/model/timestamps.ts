// Strict RFC 3339 date-times (§5.6) within the range both stores hold: real calendar dates, years 0001–9999 in UTC.

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|([+-])(\d{2}):(\d{2})))?$/;

/** The documented range: what JavaScript, SQLite's text and PostgreSQL's timestamptz all represent alike. */
export const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
export const LATEST = Date.parse('9999-12-31T23:59:59.999Z');
export const RANGE_TEXT = 'between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z';

export type ParsedTimestamp = { ok: true; iso: string } | { ok: false; message: string };

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Parses an RFC 3339 date-time into its UTC ISO form with milliseconds. `2020-02-30` or `T24:00` is refused,
 * not rolled over (`Date.parse` would make 1 March of it); a leap second (`:60`) is refused too, as neither
 * store can hold one. With `bareDate`, `2020-02-01` alone is accepted as midnight UTC (filters take it).
 */
export function parseTimestamp(raw: string, bareDate = false): ParsedTimestamp {
  const m = DATE_TIME.exec(raw);
  const hasTime = m?.[4] !== undefined;
  if (!m || (!hasTime && !bareDate)) return { ok: false, message: 'must be an RFC 3339 date-time such as 2026-01-31T12:00:00Z' };
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const [offsetHours, offsetMinutes] = [Number(m[10] ?? 0), Number(m[11] ?? 0)];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return { ok: false, message: `is not a calendar date (${m[1]}-${m[2]}-${m[3]})` };
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return { ok: false, message: 'is not a valid time of day or offset' };
  const ms = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}${(m[7] ?? '').slice(0, 4)}${m[8] && m[9] ? `${m[9]}${m[10]}:${m[11]}` : 'Z'}`);
  if (Number.isNaN(ms) || ms < EARLIEST || ms > LATEST) return { ok: false, message: `must be ${RANGE_TEXT}` };
  return { ok: true, iso: new Date(ms).toISOString() };
}
