// What a webhook endpoint's deliveries may carry, decided from its owner as it is now: the rule GET /events applies, for the endpoint's owner.
import type { CompiledModel } from '../model/compile.js';
import type { Principal } from '../model/principal.js';
import type { StoredRecord } from '../model/records.js';
import type { Reader, StoredEvent } from '../store/types.js';
import { eventFilterFor, eventMatcher, seesNothing } from '../services/event-visibility.js';

/** Whether an event may go to the endpoint, or why nothing may. */
export type Audience = { sees: (event: StoredEvent) => boolean } | { none: string };

/**
 * DESIGN §9: an endpoint's deliveries never carry an event its owner could not read with GET /events at that
 * moment. The owner is the endpoint's user, with the role it has now (a demoted admin's endpoint narrows
 * with it; a deleted user's endpoints are deleted with it), limited to the scopes of the credential that
 * registered it; an endpoint of no user is the platform's and reads as an admin with those scopes (the
 * endpoint's own `events` patterns narrow what it asks for, apart from this). Decided when events become
 * deliveries and again before each is sent, so a change between the two is never outrun.
 */
export async function endpointAudience(reader: Reader, model: CompiledModel, endpoint: StoredRecord): Promise<Audience> {
  const userId = (endpoint.user_id as string | null | undefined) ?? null;
  let role = 'admin';
  if (userId !== null) {
    const user = await reader.get(model.users, userId);
    if (!user) return { none: 'its owner no longer exists' };
    role = String(user.role);
  }
  const owner: Principal = { kind: 'system', credentialId: `webhook-endpoint:${endpoint.id}`, userId, role, scopes: (endpoint.scopes as string[] | null) ?? [] };
  const filter = eventFilterFor(model, owner, undefined);
  if (seesNothing(filter)) return { none: 'the scopes it was registered with read no resource' };
  return { sees: eventMatcher(filter) };
}

/** Audiences of several endpoints, each decided once (its owner read once) for a batch. */
export class Audiences {
  private readonly decided = new Map<string, Promise<Audience>>();

  constructor(
    private readonly reader: Reader,
    private readonly model: CompiledModel,
  ) {}

  of(endpoint: StoredRecord): Promise<Audience> {
    let audience = this.decided.get(endpoint.id);
    if (!audience) this.decided.set(endpoint.id, (audience = endpointAudience(this.reader, this.model, endpoint)));
    return audience;
  }
}
