// CSRF checks for cookie-authenticated writes (spec §5, OWASP CSRF Prevention Cheat Sheet): synchronizer or double-submit.
import { safeEqual } from '../lib/secrets.js';

export type CsrfMode = 'synchronizer' | 'double-submit';

export const UNSAFE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * synchronizer: the submitted token equals the one stored in the session.
 * double-submit: the submitted token equals the `canon_csrf` cookie, and that cookie is the one
 * issued to this session (bound to it, so a cookie planted from a sibling domain does not pass).
 * Comparisons run in constant time and never throw on length differences.
 */
export function csrfHolds(mode: CsrfMode, sessionToken: string, submitted: string | undefined, cookie: string | undefined): boolean {
  if (!submitted) return false;
  if (mode === 'synchronizer') return safeEqual(submitted, sessionToken);
  if (!cookie) return false;
  const both = [safeEqual(submitted, cookie), safeEqual(cookie, sessionToken)];
  return both[0]! && both[1]!;
}
