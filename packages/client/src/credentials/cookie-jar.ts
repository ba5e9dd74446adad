// A small cookie jar for runtimes whose fetch keeps no cookies (Node): what the one API origin sets, sent back where it applies (RFC 6265 §5.2–§5.4).

interface Cookie {
  name: string;
  value: string;
  path: string;
  secure: boolean;
  /** Unix ms; undefined for a cookie that lasts as long as the jar (a session cookie). */
  expires: number | undefined;
}

/**
 * One origin's cookies: the client talks to one server, so `Domain` is not needed (Canon sets none, DESIGN §8)
 * and every cookie is host-only. `Path`, `Secure`, `Max-Age` and `Expires` are honoured; `HttpOnly` and
 * `SameSite` concern browsers and scripts, not this jar.
 */
export class CookieJar {
  private readonly cookies = new Map<string, Cookie>();

  /** Keeps the cookies of an answer's `Set-Cookie` headers (one string each) for the URL it answered. */
  store(url: string, setCookies: readonly string[], now = Date.now()): void {
    const target = new URL(url);
    for (const line of setCookies) {
      const cookie = parseSetCookie(line, target.pathname, now);
      if (cookie === undefined) continue;
      // A Secure cookie from an insecure origin is ignored (RFC 6265bis §5.6 step 11: such an origin cannot set one).
      if (cookie.secure && target.protocol !== 'https:') continue;
      const key = `${cookie.name}\0${cookie.path}`;
      if (cookie.expires !== undefined && cookie.expires <= now) this.cookies.delete(key);
      else this.cookies.set(key, cookie);
    }
  }

  /** The `Cookie` header for a request to `url`, or undefined when no cookie applies (RFC 6265 §5.4). */
  header(url: string, now = Date.now()): string | undefined {
    if (this.cookies.size === 0) return undefined;
    const target = new URL(url);
    const matching: Cookie[] = [];
    for (const [key, cookie] of this.cookies) {
      if (cookie.expires !== undefined && cookie.expires <= now) {
        this.cookies.delete(key);
        continue;
      }
      if (cookie.secure && target.protocol !== 'https:') continue;
      if (pathMatches(target.pathname, cookie.path)) matching.push(cookie);
    }
    if (matching.length === 0) return undefined;
    // Longer paths first (RFC 6265 §5.4 step 2).
    matching.sort((a, b) => b.path.length - a.path.length);
    return matching.map((c) => `${c.name}=${c.value}`).join('; ');
  }

  get size(): number {
    return this.cookies.size;
  }
}

/** One `Set-Cookie` line (RFC 6265 §5.2); undefined when it has no name=value pair. */
function parseSetCookie(line: string, requestPath: string, now: number): Cookie | undefined {
  const [pair = '', ...attributes] = line.split(';');
  const eq = pair.indexOf('=');
  if (eq <= 0) return undefined;
  const cookie: Cookie = { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), path: defaultPath(requestPath), secure: false, expires: undefined };
  let maxAge: number | undefined;
  for (const attribute of attributes) {
    const at = attribute.indexOf('=');
    const name = (at < 0 ? attribute : attribute.slice(0, at)).trim().toLowerCase();
    const value = at < 0 ? '' : attribute.slice(at + 1).trim();
    if (name === 'max-age' && /^-?\d+$/.test(value)) maxAge = Number(value);
    else if (name === 'expires') {
      const at = Date.parse(value);
      if (!Number.isNaN(at)) cookie.expires = at;
    } else if (name === 'path' && value.startsWith('/')) cookie.path = value;
    else if (name === 'secure') cookie.secure = true;
  }
  // Max-Age wins over Expires (RFC 6265 §5.3 step 3); zero or less expires the cookie at once.
  if (maxAge !== undefined) cookie.expires = maxAge <= 0 ? now : now + maxAge * 1000;
  return cookie;
}

/** The directory of the request path (RFC 6265 §5.1.4). */
function defaultPath(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '/' : path.slice(0, slash);
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}
