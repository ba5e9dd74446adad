// Session lifetime policies of the specification (§3): absolute, idle, sliding and absolute + idle. Pure functions.

export type SessionPolicy = 'absolute' | 'idle' | 'sliding' | 'absolute+idle';
export const SESSION_POLICIES: readonly SessionPolicy[] = ['absolute', 'idle', 'sliding', 'absolute+idle'];

export interface SessionTimeouts {
  policy: SessionPolicy;
  idleSeconds: number;
  absoluteSeconds: number;
}

/**
 * When a session expires, in epoch milliseconds:
 * - absolute: a fixed time after creation;
 * - idle: a period of inactivity after the last use;
 * - sliding: the whole lifetime starts again at each use (the absolute duration, renewed);
 * - absolute+idle: whichever of absolute and idle comes first.
 */
export function expiryOf(t: SessionTimeouts, createdMs: number, lastAccessMs: number): number {
  const absolute = createdMs + t.absoluteSeconds * 1000;
  const idle = lastAccessMs + t.idleSeconds * 1000;
  switch (t.policy) {
    case 'absolute':
      return absolute;
    case 'idle':
      return idle;
    case 'sliding':
      return lastAccessMs + t.absoluteSeconds * 1000;
    case 'absolute+idle':
      return Math.min(absolute, idle);
  }
}

/** Whether using the session moves its expiry (and so the cookie's Max-Age must be sent again). */
export function renewsOnUse(policy: SessionPolicy): boolean {
  return policy !== 'absolute';
}

/** The cookie's Max-Age: whole seconds until the session expires if it is not used again. */
export function maxAgeSeconds(expiresMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((expiresMs - nowMs) / 1000));
}
