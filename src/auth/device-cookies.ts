// Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"): a browser that logged in to an account before keeps its own guessing budget there.
import { createHmac, randomBytes } from 'node:crypto';
import { serialize } from 'cookie';
import { deriveKey } from '../lib/key-crypto.js';
import { safeEqual } from '../lib/secrets.js';
import type { CookieNames } from './session-cookies.js';

/** How long a device stays trusted after its last successful login: 180 days. */
export const DEVICE_COOKIE_MAX_AGE = 180 * 24 * 3600;

/**
 * The cookie is `<nonce>.<mac>`: 128 random bits naming the device, and an HMAC-SHA256 over the nonce and
 * the account (the normalised login name) under a key derived from CANON_SECRET. It proves that this
 * browser logged in to this account once; it is no credential (it authenticates nothing by itself), so it
 * needs no server-side record. A cookie for another account, a forged one or none at all means an
 * untrusted client, which shares the account's budget with every other untrusted client.
 */
export class DeviceCookies {
  private readonly key: Buffer;

  constructor(
    secret: string,
    private readonly names: CookieNames,
  ) {
    this.key = deriveKey(secret, 'canon device cookies v1');
  }

  private mac(nonce: string, account: string): string {
    return createHmac('sha256', this.key).update(`${nonce}\n${account}`).digest('base64url');
  }

  /** A new device cookie for `account`, set at each successful login: HttpOnly, SameSite=Strict, `__Host-` and Secure in production. */
  issue(account: string): string {
    const nonce = randomBytes(16).toString('base64url');
    return serialize(this.names.device, `${nonce}.${this.mac(nonce, account)}`, {
      httpOnly: true,
      path: '/',
      sameSite: 'strict',
      maxAge: DEVICE_COOKIE_MAX_AGE,
      secure: this.names.secure,
    });
  }

  /** The device's id when `value` is a cookie this server issued for `account`; undefined otherwise. */
  deviceOf(value: string | undefined, account: string): string | undefined {
    if (value === undefined) return undefined;
    const dot = value.indexOf('.');
    if (dot !== 22 || value.length !== 66) return undefined;
    const nonce = value.slice(0, dot);
    return safeEqual(value.slice(dot + 1), this.mac(nonce, account)) ? nonce : undefined;
  }
}
