// Bearer tokens: short-lived JWT access tokens (RFC 9068) signed with ES256; every check of DESIGN §8 on the way in.
import { v7 as uuidv7 } from 'uuid';
import type { Principal } from '../model/principal.js';
import { TOKEN_ALG, type SigningKeys } from './signing-keys.js';
import { jose } from './jose.js';

export interface TokenSettings {
  ttlSeconds: number;
  issuer: () => string;
  audience: () => string;
}

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope?: string;
}

/** Why a token was refused, for the `error_description` of the 401 (RFC 6750 §3). */
export class InvalidToken extends Error {}

export class TokenService {
  constructor(
    private readonly keys: SigningKeys,
    private readonly settings: TokenSettings,
    private readonly clock: () => Date,
  ) {}

  async issue(clientId: string, scopes: string[]): Promise<IssuedToken> {
    const { SignJWT } = await jose();
    const { kid, privateKey } = await this.keys.signingKey();
    const now = Math.floor(this.clock().getTime() / 1000);
    const token = await new SignJWT({ client_id: clientId, ...(scopes.length ? { scope: scopes.join(' ') } : {}) })
      .setProtectedHeader({ alg: TOKEN_ALG, kid, typ: 'at+jwt' })
      .setIssuer(this.settings.issuer())
      .setAudience(this.settings.audience())
      .setSubject(clientId)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + this.settings.ttlSeconds)
      .setJti(uuidv7())
      .sign(privateKey);
    return { access_token: token, token_type: 'Bearer', expires_in: this.settings.ttlSeconds, ...(scopes.length ? { scope: scopes.join(' ') } : {}) };
  }

  /**
   * Verifies signature, algorithm (ES256 only: no `none`, no HMAC with the public key), `typ`,
   * `exp`, `nbf`, `iss` and `aud`, with no clock tolerance. Returns the principal the token acts as.
   */
  async verify(token: string): Promise<Principal> {
    const { jwtVerify, errors: joseErrors } = await jose();
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = await this.keys.publicKey(header.kid);
          if (!key) throw new InvalidToken('unknown signing key');
          return key;
        },
        {
          algorithms: [TOKEN_ALG],
          typ: 'at+jwt',
          issuer: this.settings.issuer(),
          audience: this.settings.audience(),
          requiredClaims: ['exp', 'nbf', 'iat', 'sub'],
          currentDate: this.clock(),
        },
      );
      const scope = typeof payload.scope === 'string' ? payload.scope : '';
      return { kind: 'bearer', credentialId: String(payload.sub), userId: null, role: 'admin', scopes: scope ? scope.split(' ') : [] };
    } catch (err) {
      if (err instanceof InvalidToken) throw err;
      if (err instanceof joseErrors.JWTExpired) throw new InvalidToken('the token has expired');
      if (err instanceof joseErrors.JWTClaimValidationFailed) throw new InvalidToken(`the token's ${err.claim} claim is not valid here`);
      throw new InvalidToken('the token is malformed or its signature does not verify');
    }
  }
}
