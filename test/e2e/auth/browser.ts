// A browser-like client for tests: a tough-cookie jar in front of the harness, sending and storing cookies per RFC 6265.
import { CookieJar } from 'tough-cookie';
import type { RequestOptions, Response, TestServer } from '../../support/harness.js';

export class Browser {
  readonly jar = new CookieJar();
  constructor(private readonly server: TestServer) {}

  /** Cookies apply to the server's origin; in-process requests stand in for http://127.0.0.1. */
  private get origin(): string {
    return this.server.baseUrl ?? 'http://127.0.0.1';
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const url = `${this.origin}${path}`;
    const cookie = await this.jar.getCookieString(url);
    const headers = { ...(options.headers ?? {}), ...(cookie ? { cookie } : {}) };
    const res = await this.server.request(method, path, { key: null, ...options, headers });
    for (const c of res.setCookies) await this.jar.setCookie(c, url);
    return res;
  }

  async login(email: string, password: string): Promise<Response> {
    return this.request('POST', '/v2/sessions', { body: { email, password } });
  }

  async cookie(name: string): Promise<string | undefined> {
    return (await this.jar.getCookies(`${this.origin}/`)).find((c) => c.key === name)?.value;
  }
}
