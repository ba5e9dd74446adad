// Redis for tests: the URL from CANON_TEST_REDIS_URL and a key prefix unique to this run.
import { randomBytes } from 'node:crypto';

export const REDIS_URL = process.env.CANON_TEST_REDIS_URL;
export const REDIS_SKIP = REDIS_URL ? false : 'CANON_TEST_REDIS_URL is not set: Redis suites skipped';

export function runPrefix(): string {
  return `canon-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
}
