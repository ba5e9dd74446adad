// Cookie sessions as use cases, whatever the transport (DESIGN §8): login under the caller's guessing budget, the current session, logout.
import { CHALLENGES } from '../auth/authenticator.js';
import { loginName, type NewSession, type SessionManager } from '../auth/sessions.js';
import { AppError } from '../errors/app-error.js';
import type { Principal } from '../model/principal.js';
import type { StoredRecord } from '../model/records.js';
import { validateShape, type BodyFormat } from '../model/validate.js';
import { isWellFormedText } from '../model/well-formed-text.js';
import { PLATFORM_SCHEMAS } from '../platform/request-schemas.js';

const { LOGIN } = PLATFORM_SCHEMAS;

/** A login that succeeded: the new session, and the account it named (the transport's guessing budgets are per account). */
export interface Login {
  session: NewSession;
  account: string;
}

/** The session a request is authenticated by, with its user as stored now. */
export interface CurrentSession {
  record: StoredRecord;
  user: StoredRecord;
  csrfToken: string;
}

function wrongLogin(): AppError {
  return new AppError('UNAUTHENTICATED', 'The email or password is wrong.', { facts: { challenges: CHALLENGES } });
}

export class Sessions {
  constructor(private readonly manager: SessionManager) {}

  /**
   * Opens a new session for an email and a password. `throttle(account)` runs before the password is checked:
   * the transport counts the attempt against its guessing budgets (and refuses it when over), as for a
   * password change. A wrong email or password is 401, whichever it was.
   */
  async login(body: unknown, format: BodyFormat, throttle: (account: string) => Promise<void>): Promise<Login> {
    // Text that is not well-formed cannot be anyone's email or password: a wrong login like any other (401), counted.
    const input = validateShape<{ email: string; password: string }>(LOGIN, body, format, 'login', false);
    const account = loginName(input.email);
    await throttle(account);
    if (!isWellFormedText(input.email) || !isWellFormedText(input.password)) throw wrongLogin();
    // A new session, with a new id, at every login: a planted id never becomes authenticated (spec §5 rule 5).
    const session = await this.manager.login(input.email, input.password);
    if (!session) throw wrongLogin();
    return { session, account };
  }

  /** The session `principal` is authenticated by; 404 when it is not a session's, or the session has ended since. */
  async current(principal: Principal): Promise<CurrentSession> {
    const s = sessionOf(principal);
    const found = await this.manager.current(s.id, principal.userId!);
    if (!found) throw new AppError('NOT_FOUND', 'The session has ended.');
    return { ...found, csrfToken: s.csrfToken };
  }

  /** Ends the session `principal` is authenticated by (404 when it is not a session's). */
  async logout(principal: Principal): Promise<void> {
    await this.manager.logout(sessionOf(principal).id);
  }
}

function sessionOf(principal: Principal): { id: string; csrfToken: string } {
  const s = principal.session;
  if (!s) throw new AppError('NOT_FOUND', 'This request is not authenticated by a session cookie, so there is no current session.');
  return s;
}
