// The scopes outside the resource model (DESIGN §9): a credential lists them like `{resource}:read`; no resource grants them.

/** What `GET /metrics` needs: admins with an unrestricted credential hold it; any other credential must list it. */
export const METRICS_READ = 'metrics:read';

/** Every platform scope, as the OAuth metadata advertises them (`scopes_supported`). */
export const PLATFORM_SCOPES: readonly string[] = [METRICS_READ];
