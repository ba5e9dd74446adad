// How many event streams one credential, and one user across all its credentials, may hold open on this process.
import { AppError } from '../errors/app-error.js';
import type { Principal } from '../model/principal.js';

export interface StreamCapLimits {
  perCredential: number;
  perUser: number;
}

/**
 * Each open stream holds a connection and up to its send buffer (CANON_SSE_BUFFER_BYTES). A cap per credential
 * alone lets one user multiply it by its sessions and keys (five sessions and a key held 600 streams, issue
 * 26.13), so a user's streams are counted together as well. Admin keys bound to no user have only their own cap.
 */
export class StreamCaps {
  private readonly held = new Map<string, number>();

  constructor(private readonly limits: StreamCapLimits) {}

  /** Counts one more stream for the principal, or 429 RATE_LIMITED past either cap; returns its release (idempotent). */
  acquire(principal: Principal): () => void {
    const credential = `credential:${principal.kind}:${principal.credentialId}`;
    const user = principal.userId === null ? undefined : `user:${principal.userId}`;
    const byCredential = this.held.get(credential) ?? 0;
    if (byCredential >= this.limits.perCredential) {
      throw new AppError('RATE_LIMITED', `This credential holds ${byCredential} event streams on this server already; close one first.`, { headers: { 'retry-after': '5' } });
    }
    const byUser = user === undefined ? 0 : (this.held.get(user) ?? 0);
    if (user !== undefined && byUser >= this.limits.perUser) {
      throw new AppError('RATE_LIMITED', `This user holds ${byUser} event streams on this server already, across its sessions and keys; close one first.`, {
        headers: { 'retry-after': '5' },
      });
    }
    this.held.set(credential, byCredential + 1);
    if (user !== undefined) this.held.set(user, byUser + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.decrement(credential);
      if (user !== undefined) this.decrement(user);
    };
  }

  private decrement(key: string): void {
    const n = (this.held.get(key) ?? 1) - 1;
    if (n > 0) this.held.set(key, n);
    else this.held.delete(key);
  }
}
