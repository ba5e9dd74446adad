// OAuth 2.0 client credentials (RFC 6749 §4.4) against the server's token endpoint: the token cached, renewed before it expires, one token request in flight for every concurrent call.
import type { CanonError } from '../errors.js';
import type { Credential, Transport } from '../transport.js';

export interface OAuthOptions {
  clientId: string;
  clientSecret: string;
  /** Scopes to ask for (RFC 6749 §3.3), space-separated or a list; without it, everything the client holds. */
  scope?: string | readonly string[];
  /** The token endpoint, a path from the server's root or an absolute URL. Default `/oauth/token` (DESIGN §8). */
  tokenUrl?: string;
  /** How long before its expiry a token is renewed. Default 60 s (at most half the token's lifetime). */
  refreshBeforeMs?: number;
}

interface Token {
  value: string;
  /** Unix ms, counted from when the request was sent (so never later than the server's own expiry). */
  expiresAt: number;
  lifetimeMs: number;
}

export class OAuthCredential implements Credential {
  private token: Token | undefined;
  private pending: Promise<Token> | undefined;
  private readonly basic: string;
  private readonly scope: string | undefined;

  constructor(
    private readonly options: OAuthOptions,
    private readonly transport: Transport,
    private readonly now: () => number = Date.now,
  ) {
    if (typeof options.clientId !== 'string' || options.clientId === '' || typeof options.clientSecret !== 'string' || options.clientSecret === '') {
      throw new TypeError('oauth needs a clientId and a clientSecret');
    }
    // HTTP Basic with each part form-encoded first (RFC 6749 §2.3.1), then base64 (RFC 7617 §2).
    this.basic = `Basic ${btoa(`${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`)}`;
    this.scope = typeof options.scope === 'string' ? options.scope : options.scope?.join(' ');
  }

  async headers(): Promise<Record<string, string>> {
    return { authorization: `Bearer ${(await this.current()).value}` };
  }

  /** A 401 says the token is no longer accepted (expired early, its client changed): drop it, so the retry gets a new one. */
  async recover(error: CanonError, sent: Record<string, string>): Promise<boolean> {
    if (error.status !== 401) return false;
    // Only the token that was refused: a concurrent call may already have renewed it.
    if (this.token !== undefined && sent.authorization === `Bearer ${this.token.value}`) this.token = undefined;
    return true;
  }

  /** The cached token while it is fresh, else the one request in flight, else a new request. */
  private current(): Token | Promise<Token> {
    const token = this.token;
    if (token !== undefined && this.now() < token.expiresAt - Math.min(this.options.refreshBeforeMs ?? 60_000, token.lifetimeMs / 2)) return token;
    if (this.pending === undefined) {
      this.pending = this.request().finally(() => {
        this.pending = undefined;
      });
    }
    return this.pending;
  }

  private async request(): Promise<Token> {
    const sentAt = this.now();
    const form: Record<string, string> = { grant_type: 'client_credentials' };
    if (this.scope !== undefined) form.scope = this.scope;
    const reply = await this.transport.send({
      method: 'POST',
      url: this.options.tokenUrl ?? '/oauth/token',
      form,
      headers: { authorization: this.basic },
      idempotencyKey: false,
      authenticate: false,
    });
    const body = reply.body as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (typeof body?.access_token !== 'string' || typeof body.expires_in !== 'number') {
      throw new TypeError(`the token endpoint answered ${reply.status} without access_token and expires_in (RFC 6749 §5.1)`);
    }
    const lifetimeMs = body.expires_in * 1000;
    this.token = { value: body.access_token, expiresAt: sentAt + lifetimeMs, lifetimeMs };
    return this.token;
  }
}

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 Appendix B). */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
