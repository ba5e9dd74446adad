// Closes streams whose credential no longer holds: checked when the credentials epoch moves, and every minute for expiries.
import type { EventHub } from './hub.js';

/**
 * A stream is authenticated once, at connect; a key deleted or a session ended later must not keep
 * receiving events. The store's credentials epoch moves in every process when any credential changes
 * (src/store/types.ts), so each change re-checks every stream's credential at the next tick; a full
 * re-check every `fullEveryMs` catches what expires without a change (a session's idle or absolute end,
 * a bearer token's `exp`).
 */
export function streamGuard(hub: EventHub, epoch: () => number | Promise<number>, fullEveryMs: number, now: () => number = Date.now): () => Promise<void> {
  let seen: number | undefined;
  let lastFull = now();
  return async () => {
    const current = await epoch();
    const full = now() - lastFull >= fullEveryMs;
    if (current === seen && !full) return;
    seen = current;
    if (full) lastFull = now();
    const checks = [...hub.all()].map(async (stream) => {
      if (!(await stream.options.stillAuthorized().catch(() => false))) stream.close('revoked');
    });
    await Promise.all(checks);
  };
}
