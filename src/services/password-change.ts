// The password change as a use case, whatever the transport: who may change whose password, the current one checked, every session of the user ended.
import type { PasswordHasher } from '../auth/password-hasher.js';
import type { SessionManager } from '../auth/sessions.js';
import { loginName } from '../auth/sessions.js';
import { PLATFORM_SCHEMAS } from '../platform/request-schemas.js';
import { AppError } from '../errors/app-error.js';
import type { Principal } from '../model/principal.js';
import { validateShape, type BodyFormat } from '../model/validate.js';
import type { ResourceService } from './resource-service.js';

export class PasswordChanges {
  constructor(
    private readonly services: ResourceService,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionManager,
    private readonly users: string,
  ) {}

  /**
   * Changes the password of user `userId` as `principal`. `throttle(account)` runs before the current password
   * is checked: the transport counts the attempt against the same budgets as a login (and refuses it when over).
   */
  async change(principal: Principal, userId: string, body: unknown, format: BodyFormat, throttle: (account: string) => Promise<void>): Promise<void> {
    const input = validateShape<{ current_password?: string; new_password: string }>(PLATFORM_SCHEMAS.PASSWORD_CHANGE, body, format, 'password change');
    // Visibility and permission as for PATCH on the user: others' accounts are 404, and the caller must be allowed to change it.
    const target = await this.services.get({ principal }, this.users, userId);
    if (!target.access.update) throw new AppError('FORBIDDEN', 'You may not change this user’s password.');
    // Users changing their own password prove they know it; an admin resetting someone else's does not.
    if (principal.userId === target.record.id || input.current_password !== undefined) {
      if (input.current_password === undefined) {
        throw new AppError('VALIDATION_ERROR', 'Changing your own password needs the current one.', { details: [{ field: 'current_password', message: 'is required' }] });
      }
      // A password check like a login's, with the same budgets: a stolen key cannot guess here instead.
      await throttle(loginName(String(target.record.email)));
      if (!(await this.passwords.verify(input.current_password, String(target.record.password_hash)))) {
        throw new AppError('VALIDATION_ERROR', 'The current password is wrong.', { details: [{ field: 'current_password', message: 'is not the current password' }] });
      }
    }
    const hash = await this.passwords.hash(input.new_password);
    await this.services.transact(principal, async (ctx, tx) => {
      await ctx.services.update(this.users, target.record.id, { password_hash: hash });
      await this.sessions.endAllForUser(tx, target.record.id);
    });
  }
}
