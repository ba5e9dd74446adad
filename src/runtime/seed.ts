// Seeds demo data through the services (so events and hooks run) when the users table is empty.
import { randomUUID } from 'node:crypto';
import { SYSTEM, type Principal } from '../model/principal.js';
import type { AppDef, Seeder } from '../model/types.js';
import type { ResourceService } from '../services/resource-service.js';
import type { Store } from '../store/types.js';
import { whileBusy } from './while-busy.js';

function seederFor(services: ResourceService, principal: () => Promise<Principal>): Seeder {
  return {
    // Each create tried again while the store is busy (processes starting at once on one SQLite file): refused as
    // busy it wrote nothing. The claim below makes this process the only one seeding.
    create: async (resource, body) => {
      const as = await principal();
      return (await whileBusy(() => services.create({ principal: as }, resource, body))).record;
    },
    as: (userId) =>
      seederFor(services, async () => {
        const user = await services.get({ principal: SYSTEM }, services.model.users, userId);
        return { ...SYSTEM, userId, role: String(user.record.role) };
      }),
  };
}

/**
 * Returns true when it seeded; a database that already has users is left alone. Processes starting at once on
 * an empty database would each seed (and all but one fail on a unique email), so the first to claim the seed in
 * the store's meta table seeds and the others start without. Seeding happens once per database: a seed cut
 * short by a crash is not retried.
 */
export async function seedIfEmpty(app: AppDef, store: Store, services: ResourceService): Promise<boolean> {
  if (!app.seed) return false;
  const { rows } = await store.list(app.users, { where: [], orderBy: [{ path: 'id', desc: false }], limit: 1 });
  if (rows.length > 0) return false;
  const claim = randomUUID();
  if ((await whileBusy(() => store.metaValue('seed_claimed_by', claim))) !== claim) return false;
  await app.seed(seederFor(services, async () => SYSTEM));
  return true;
}
