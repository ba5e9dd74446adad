// Rate limits (DESIGN §11): per principal, per IP for anonymous traffic, global, and stricter login limits.
import type { Principal } from '../auth/principal.js';
import type { Consumption, Counters, ImmediateCounters } from '../counters/types.js';
import { AppError } from '../errors/app-error.js';

/** `<requests>/<seconds>`, as in CANON_RATE_LIMIT_PER_PRINCIPAL=600/60. */
export interface Rate {
  limit: number;
  periodSeconds: number;
}

export type RateAlgorithm = 'token-bucket' | 'sliding-window';

export interface RateLimits {
  enabled: boolean;
  algorithm: RateAlgorithm;
  perPrincipal: Rate;
  perIp: Rate;
  global: Rate;
  loginPerAccount: Rate;
  loginPerIp: Rate;
}

export function parseRate(value: string, name: string): Rate {
  const m = /^(\d+)\/(\d+)$/.exec(value.trim());
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new Error(`${name} must look like <requests>/<seconds>, such as 600/60; got "${value}"`);
  return { limit: Number(m[1]), periodSeconds: Number(m[2]) };
}

export interface Verdict {
  /** The limit the headers describe: the refused one, or the caller's own. */
  shown: Consumption;
  refused: Consumption | undefined;
}

export function rateHeaders(c: Consumption): Record<string, string> {
  return { 'x-ratelimit-limit': String(c.limit), 'x-ratelimit-remaining': String(c.remaining), 'x-ratelimit-reset': String(c.resetAt) };
}

export function rateLimited(v: Verdict): AppError {
  const c = v.refused!;
  return new AppError('RATE_LIMITED', `Too many requests; retry in ${c.retryAfter} s.`, { headers: { ...rateHeaders(c), 'retry-after': String(c.retryAfter) } });
}

/** Own limit refused: that decides (and the global one was not taken); else the global one. */
function decide(own: Consumption, global: Consumption | undefined): Verdict {
  if (!own.allowed || global === undefined) return { shown: own, refused: own };
  return global.allowed ? { shown: own, refused: undefined } : { shown: global, refused: global };
}

const counterKeys = new WeakMap<Principal, string>();

export class RateLimiter {
  constructor(private readonly counters: Counters, readonly limits: RateLimits) {}

  private consume(key: string, rate: Rate): Promise<Consumption> {
    return this.limits.algorithm === 'sliding-window'
      ? this.counters.slidingWindow(key, { limit: rate.limit, windowSeconds: rate.periodSeconds })
      : this.counters.tokenBucket(key, { capacity: rate.limit, periodSeconds: rate.periodSeconds });
  }

  private take(now: ImmediateCounters, key: string, rate: Rate): Consumption {
    return this.limits.algorithm === 'sliding-window'
      ? now.slidingWindow(key, { limit: rate.limit, windowSeconds: rate.periodSeconds })
      : now.tokenBucket(key, { capacity: rate.limit, periodSeconds: rate.periodSeconds });
  }

  /** The caller's own limit first, then the global one; the first refusal decides. */
  private check(key: string, rate: Rate): Verdict | Promise<Verdict> {
    const now = this.counters.immediate;
    if (now) {
      // In-process counters answer at once: no promise on the hot path.
      const own = this.take(now, key, rate);
      return decide(own, own.allowed ? this.take(now, 'global', this.limits.global) : undefined);
    }
    return (async () => {
      const own = await this.consume(key, rate);
      return decide(own, own.allowed ? await this.consume('global', this.limits.global) : undefined);
    })();
  }

  /** Authenticated traffic counts against its principal: the user for user-bound credentials, else the credential. */
  forPrincipal(p: Principal): Verdict | Promise<Verdict> {
    // Cached principals (API keys) come back as the same object: one key string each, its hash computed once.
    let key = counterKeys.get(p);
    if (key === undefined) {
      key = `p:${p.userId ?? `${p.kind}:${p.credentialId}`}`;
      counterKeys.set(p, key);
    }
    return this.check(key, this.limits.perPrincipal);
  }

  forIp(ip: string): Verdict | Promise<Verdict> {
    return this.check(`ip:${ip}`, this.limits.perIp);
  }

  /** Login attempts count per account and per IP, against password guessing; the stricter answer is shown. */
  async forLogin(email: string, ip: string): Promise<Verdict> {
    const account = await this.consume(`login-account:${email.toLowerCase()}`, this.limits.loginPerAccount);
    if (!account.allowed) return { shown: account, refused: account };
    const byIp = await this.consume(`login-ip:${ip}`, this.limits.loginPerIp);
    if (!byIp.allowed) return { shown: byIp, refused: byIp };
    return { shown: account.remaining <= byIp.remaining ? account : byIp, refused: undefined };
  }
}
