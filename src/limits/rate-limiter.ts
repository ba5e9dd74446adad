// Rate limits (DESIGN §11): per principal, per IP for anonymous traffic, global, and stricter login limits.
import type { Principal } from '../model/principal.js';
import type { Consumption, Counters, ImmediateCounters, SlidingWindow, TokenBucket } from '../counters/types.js';
import { AppError } from '../errors/app-error.js';
import { addressKey } from './client-address.js';

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
  /** Password checks for one account by clients without a device cookie for it, all together. */
  loginPerAccount: Rate;
  /** Password checks by one device (a browser holding a device cookie for the account). */
  loginPerDevice: Rate;
  /** Password checks from one client address, whatever the account. */
  loginPerIp: Rate;
  /** IPv6 clients are counted by network: the first this many bits of the address (src/limits/client-address.ts). */
  ipv6Prefix: number;
}

/** One password check about to run (a login, a password change): what it is counted against. */
export interface PasswordAttempt {
  /** The account (its normalised login name). */
  account: string;
  ip: string;
  /** Set when the client holds a device cookie valid for this account (src/auth/device-cookies.ts). */
  device?: string;
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
  const headers: Record<string, string> = {};
  setRateHeaders(headers, c);
  return headers;
}

/** Writes the three headers into `headers` itself: the lean GET path sends that object as it is. */
export function setRateHeaders(headers: Record<string, string>, c: Consumption): void {
  headers['x-ratelimit-limit'] = String(c.limit);
  headers['x-ratelimit-remaining'] = String(c.remaining);
  headers['x-ratelimit-reset'] = String(c.resetAt);
}

export function rateLimited(v: Verdict): AppError {
  const c = v.refused!;
  return new AppError('RATE_LIMITED', `Too many requests; retry in ${c.retryAfter} s.`, {
    facts: { rateLimit: { limit: c.limit, remaining: c.remaining, resetAt: c.resetAt }, retryAfterSeconds: c.retryAfter },
  });
}

/** Own limit refused: that decides (and the global one was not taken); else the global one. */
function decide(own: Consumption, global: Consumption | undefined): Verdict {
  if (!own.allowed || global === undefined) return { shown: own, refused: own };
  return global.allowed ? { shown: own, refused: undefined } : { shown: global, refused: global };
}

const counterKeys = new WeakMap<Principal, string>();
/** How many client addresses' counter keys RateLimiter keeps parsed. */
const IP_KEYS_KEPT = 4096;

/** A rate with the counter arguments for either algorithm, made once rather than on every request. */
interface Limit {
  bucket: TokenBucket;
  window: SlidingWindow;
}

const limitOf = (rate: Rate): Limit => ({
  bucket: { capacity: rate.limit, periodSeconds: rate.periodSeconds },
  window: { limit: rate.limit, windowSeconds: rate.periodSeconds },
});

export class RateLimiter {
  private readonly slidingWindow: boolean;
  private readonly principal: Limit;
  private readonly ip: Limit;
  private readonly global: Limit;
  private readonly loginAccount: Limit;
  private readonly loginDevice: Limit;
  private readonly loginIp: Limit;
  /**
   * Counter keys of recent client addresses: parsing an address (ipaddr.js) costs more than the counting, and a
   * keep-alive client sends the same address again and again. Bounded: emptied when full, so a stream of
   * distinct addresses costs a parse each, as without it, and never more memory than this many entries.
   */
  private readonly ipKeys = new Map<string, string>();

  constructor(
    private readonly counters: Counters,
    readonly limits: RateLimits,
  ) {
    this.slidingWindow = limits.algorithm === 'sliding-window';
    this.principal = limitOf(limits.perPrincipal);
    this.ip = limitOf(limits.perIp);
    this.global = limitOf(limits.global);
    this.loginAccount = limitOf(limits.loginPerAccount);
    this.loginDevice = limitOf(limits.loginPerDevice);
    this.loginIp = limitOf(limits.loginPerIp);
  }

  private consume(key: string, limit: Limit, cost = 1): Promise<Consumption> {
    return this.slidingWindow ? this.counters.slidingWindow(key, limit.window, cost) : this.counters.tokenBucket(key, limit.bucket, cost);
  }

  private take(counters: ImmediateCounters, key: string, limit: Limit, at: number, cost: number): Consumption {
    return this.slidingWindow ? counters.slidingWindow(key, limit.window, cost, at) : counters.tokenBucket(key, limit.bucket, cost, at);
  }

  /** The caller's own limit first, then the global one; the first refusal decides. `cost`: how many requests this one counts as. */
  private check(key: string, limit: Limit, cost = 1): Verdict | Promise<Verdict> {
    const counters = this.counters.immediate;
    if (counters) {
      // In-process counters answer at once: no promise on the hot path, and one clock read for both limits.
      const at = counters.now();
      const own = this.take(counters, key, limit, at, cost);
      return decide(own, own.allowed ? this.take(counters, 'global', this.global, at, cost) : undefined);
    }
    return (async () => {
      const own = await this.consume(key, limit, cost);
      return decide(own, own.allowed ? await this.consume('global', this.global, cost) : undefined);
    })();
  }

  /**
   * Authenticated traffic counts against its principal: the user for user-bound credentials, else the credential.
   * `cost`: how many requests this one counts as (a GraphQL operation counts by its cost, src/graphql/engine.ts).
   */
  forPrincipal(p: Principal, cost = 1): Verdict | Promise<Verdict> {
    // Cached principals (API keys) come back as the same object: one key string each, its hash computed once.
    let key = counterKeys.get(p);
    if (key === undefined) {
      key = `p:${p.userId ?? `${p.kind}:${p.credentialId}`}`;
      counterKeys.set(p, key);
    }
    return this.check(key, this.principal, cost);
  }

  forIp(ip: string): Verdict | Promise<Verdict> {
    let key = this.ipKeys.get(ip);
    if (key === undefined) {
      if (this.ipKeys.size >= IP_KEYS_KEPT) this.ipKeys.clear();
      key = `ip:${addressKey(ip, this.limits.ipv6Prefix)}`;
      this.ipKeys.set(ip, key);
    }
    return this.check(key, this.ip, 1);
  }

  /**
   * Every password check (login, password change) is counted before it runs, against guessing (docs/security.md):
   * a client holding a device cookie for the account against that device's own budget, any other client
   * against the account's budget for untrusted clients; then against its address. A stranger who exhausts
   * the account's budget refuses only untrusted clients: the owner's browser keeps its own. A refused
   * account or device takes nothing from the address. The stricter answer is shown.
   */
  async forPasswordAttempt(a: PasswordAttempt): Promise<Verdict> {
    const own = a.device !== undefined ? await this.consume(`pw-device:${a.device}`, this.loginDevice) : await this.consume(`pw-account:${a.account}`, this.loginAccount);
    if (!own.allowed) return { shown: own, refused: own };
    const byIp = await this.consume(`pw-ip:${addressKey(a.ip, this.limits.ipv6Prefix)}`, this.loginIp);
    if (!byIp.allowed) return { shown: byIp, refused: byIp };
    return { shown: own.remaining <= byIp.remaining ? own : byIp, refused: undefined };
  }
}
