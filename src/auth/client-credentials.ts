// The client-credentials grant as a use case (RFC 6749 §4.4): the client authenticated as it is stored now, the scopes it may grant, a token issued.
import type { Reader } from '../store/types.js';
import { authenticateClient, grantScopes, type ClientCredentials } from './oauth-clients.js';
import type { IssuedToken, TokenService } from './tokens.js';

export class ClientCredentialsGrant {
  constructor(
    private readonly clients: Reader,
    private readonly tokens: Pick<TokenService, 'issue'>,
  ) {}

  /**
   * A token for the client the credentials authenticate (a verified certificate's SHA-256 fingerprint for
   * RFC 8705 clients), with the scopes asked for (`scope`, space-separated) or else the client's own.
   * Refusals are OAuthErrors, answered in the RFC 6749 §5.2 body by the transport.
   */
  async issue(credentials: ClientCredentials, certificateSha256: string | undefined, scope: string | undefined): Promise<IssuedToken> {
    const client = await authenticateClient(this.clients, credentials, certificateSha256);
    return this.tokens.issue(String(client.client_id), grantScopes(client, scope));
  }
}
