// The session and CSRF cookies with the exact attributes of DESIGN §8 (serialised by the `cookie` package).
import { serialize } from 'cookie';

export interface CookieNames {
  session: string;
  csrf: string;
  /** The device cookie (src/auth/device-cookies.ts). */
  device: string;
  secure: boolean;
}

/** `__Host-` names need Secure, Path=/ and no Domain (RFC 6265bis §4.1.3.2): production only. */
export function cookieNames(production: boolean): CookieNames {
  return production
    ? { session: '__Host-canon_session', csrf: '__Host-canon_csrf', device: '__Host-canon_device', secure: true }
    : { session: 'canon_session', csrf: 'canon_csrf', device: 'canon_device', secure: false };
}

/** HttpOnly; Path=/; SameSite=Lax; Max-Age; no Domain; Secure in production. */
export function sessionCookie(names: CookieNames, id: string, maxAge: number): string {
  return serialize(names.session, id, { httpOnly: true, path: '/', sameSite: 'lax', maxAge, secure: names.secure });
}

/** The double-submit cookie: readable by the page's script (not HttpOnly), otherwise like the session cookie. */
export function csrfCookie(names: CookieNames, token: string, maxAge: number): string {
  return serialize(names.csrf, token, { httpOnly: false, path: '/', sameSite: 'lax', maxAge, secure: names.secure });
}

/** Deletes a cookie: the same name and path, an empty value and Max-Age=0. */
export function clearCookie(names: CookieNames, name: string): string {
  return serialize(name, '', { httpOnly: name === names.session, path: '/', sameSite: 'lax', maxAge: 0, secure: names.secure });
}
