// A cookie session (DESIGN §8): logs in with an email and a password, keeps the cookie (a jar in Node, the browser's own store in a browser) and sends the session's CSRF token with every write.
import type { CanonError } from '../errors.js';
import type { Credential, Method, Transport } from '../transport.js';
import type { SessionBody } from '../types.js';
import { CookieJar } from './cookie-jar.js';

export interface SessionOptions {
  /** With `password`, the client logs in before its first request and again when the session has ended (401). */
  email?: string;
  password?: string;
  /**
   * Who keeps the cookie. `jar` (default where there is no `document`, as in Node): this client, in memory.
   * `browser` (default in a page): the browser, which stores the HttpOnly cookie and sends it itself
   * (`credentials: 'include'`); the client then only keeps the CSRF token, from the login answer or, for a session
   * the page already has, from `GET /sessions/current`.
   */
  cookies?: 'jar' | 'browser';
}

/** Methods that change state and need the CSRF token under a cookie (spec §5 "CSRF protection"). */
const UNSAFE: ReadonlySet<Method> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class SessionCredential implements Credential {
  readonly fetchCredentials: RequestInit['credentials'];
  private readonly jar: CookieJar | undefined;
  private csrf: string | undefined;
  private pending: Promise<unknown> | undefined;
  /** Counts logins; `issued` says which login each headers object was made under. */
  private logins = 0;
  private readonly issued = new WeakMap<object, number>();

  constructor(
    private readonly options: SessionOptions,
    private readonly transport: Transport,
    /** `POST` logs in, `/current` reads and ends the session: the current version's paths (platform operations). */
    private readonly sessionsPath: string,
  ) {
    if ((options.email === undefined) !== (options.password === undefined))
      throw new TypeError('session needs both an email and a password, or neither (a browser session that exists already)');
    const mode = options.cookies ?? ('document' in globalThis ? 'browser' : 'jar');
    if (mode !== 'jar' && mode !== 'browser') throw new TypeError(`session.cookies must be 'jar' or 'browser', not ${String(mode)}`);
    this.jar = mode === 'jar' ? new CookieJar() : undefined;
    this.fetchCredentials = mode === 'browser' ? 'include' : undefined;
  }

  async headers(method: Method, url: string): Promise<Record<string, string>> {
    // Logged in (or the CSRF token known) before the first request that needs it; one such request for all calls.
    if (this.csrf === undefined && (this.canLogIn || UNSAFE.has(method))) await this.once(() => (this.canLogIn ? this.login() : this.current()));
    const headers: Record<string, string> = {};
    const cookie = this.jar?.header(url);
    if (cookie !== undefined) headers.cookie = cookie;
    if (UNSAFE.has(method) && this.csrf !== undefined) headers['x-csrf-token'] = this.csrf;
    this.issued.set(headers, this.logins);
    return headers;
  }

  received(response: Response, url: string): void {
    // getSetCookie (Node 20, current browsers): each Set-Cookie apart; a browser never shows them to scripts.
    if (this.jar !== undefined) this.jar.store(url, response.headers.getSetCookie());
  }

  /** 401: the session ended (expired, logged out, the password changed); 403 CSRF_TOKEN_INVALID: the token is stale. */
  async recover(error: CanonError, sent: Record<string, string>): Promise<boolean> {
    if (error.status === 401 && this.canLogIn) {
      // Log in again unless a concurrent call did since this request was sent.
      const under = this.issued.get(sent);
      await this.once(() => (under === this.logins ? this.login() : Promise.resolve()));
      return true;
    }
    if (error.status === 403 && error.code === 'CSRF_TOKEN_INVALID') {
      const stale = sent['x-csrf-token'];
      await this.once(() => (this.csrf === stale ? this.current() : Promise.resolve()));
      return true;
    }
    return false;
  }

  /** Logs in with the configured email and password (DESIGN §8: a new session id at every login). */
  async login(): Promise<SessionBody> {
    if (!this.canLogIn) throw new TypeError('this client has no session email and password to log in with');
    const reply = await this.transport.send({
      method: 'POST',
      url: this.sessionsPath,
      json: { email: this.options.email, password: this.options.password },
      idempotencyKey: false,
      authenticate: false,
    });
    const body = reply.body as SessionBody;
    this.csrf = body.csrf_token;
    this.logins++;
    return body;
  }

  /** Reads the current session, and with it the CSRF token (for a session this client did not log in itself). */
  async current(): Promise<SessionBody> {
    const url = `${this.sessionsPath}/current`;
    const cookie = this.jar?.header(this.transport.resolve(url));
    const reply = await this.transport.send({ method: 'GET', url, authenticate: false, ...(cookie !== undefined ? { headers: { cookie } } : {}) });
    const body = reply.body as SessionBody;
    this.csrf = body.csrf_token;
    return body;
  }

  /** Ends the session (`DELETE /sessions/current`); the server clears the cookie, the client forgets the token. */
  async logout(): Promise<void> {
    await this.transport.send({ method: 'DELETE', url: `${this.sessionsPath}/current` });
    this.csrf = undefined;
  }

  private get canLogIn(): boolean {
    return this.options.email !== undefined && this.options.password !== undefined;
  }

  /** Runs `step` unless one is in flight, in which case it waits for that one: one login for all concurrent calls. */
  private async once(step: () => Promise<unknown>): Promise<void> {
    if (this.pending === undefined) {
      this.pending = step().finally(() => {
        this.pending = undefined;
      });
    }
    await this.pending;
  }
}
