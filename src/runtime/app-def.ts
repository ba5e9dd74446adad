// The app a process serves: a definition given in code or the module CANON_CONFIG names, plus the resources every Canon app has.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Config } from '../config/config.js';
import { defineApp } from '../model/define.js';
import type { AppDef } from '../model/types.js';
import { apiKeysResource } from '../platform/api-keys.js';
import { sessionsResource, signingKeysResource } from '../platform/internal.js';
import { oauthClientsResource } from '../platform/oauth-clients.js';
import { operationsResource } from '../platform/operations.js';
import { webhookDeliveriesResource, webhookDispatchResource } from '../webhooks/deliveries.js';
import { webhookEndpointsResource, type WebhookEndpointOptions } from '../webhooks/endpoints.js';
import { webhookEndpointOptions } from '../webhooks/endpoint-options.js';

/** Loads the resource definition module named by CANON_CONFIG / --config; its default export is the app. */
export async function loadAppDef(modulePath: string): Promise<AppDef> {
  const mod = (await import(pathToFileURL(resolve(modulePath)).href)) as { default?: unknown };
  const app = mod.default as AppDef | undefined;
  if (!app || typeof app !== 'object' || !Array.isArray(app.resources)) throw new Error(`${modulePath} must export the app definition (defineApp(...)) as its default export`);
  // Checked here too: a module may export the object without passing it through defineApp.
  return defineApp(app);
}

/** The app to serve: the one given, else the module CANON_CONFIG names. Which app is the default is the caller's choice (the CLI serves the reference app). */
export async function appOf(config: Config, appDef: AppDef | undefined): Promise<AppDef> {
  if (appDef) return appDef;
  if (config.configModule) return loadAppDef(config.configModule);
  throw new Error('No app to serve: pass an app definition, or name its module with CANON_CONFIG / --config.');
}

/**
 * Adds the platform resources every Canon app has. The users resource stands behind credentials: a role
 * or password change ends the cached credentials of every process (ResourceDef.credentialFields).
 */
export function withPlatform(app: AppDef, webhooks?: WebhookEndpointOptions): AppDef {
  // Without a runtime (the catalog, OpenAPI), secrets are never made: the model needs only the definitions.
  const endpointOptions =
    webhooks ??
    webhookEndpointOptions(
      false,
      app,
      () => {
        throw new Error('webhook secrets are sealed only by a runtime');
      },
      () => Promise.reject(new Error('webhook endpoints are created only by a runtime')),
    );
  const resources = app.resources.map((r) => (r.name === app.users && r.credentialFields === undefined ? { ...r, credentialFields: ['role', 'password_hash'] } : r));
  return {
    ...app,
    resources: [
      ...resources,
      apiKeysResource(app.users, endpointOptions.versionDates),
      oauthClientsResource(endpointOptions.versionDates),
      sessionsResource(app.users),
      signingKeysResource(),
      operationsResource(),
      webhookEndpointsResource(endpointOptions),
      webhookDeliveriesResource(),
      webhookDispatchResource(),
    ],
  };
}
