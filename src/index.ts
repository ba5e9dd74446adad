// The public entry for app authors (`import { defineApp } from 'canon-api-server'`): definition builders, AppError and the types of definitions and hooks; re-exports only.
export { defineApp, defineResource, f } from './model/define.js';
export type {
  ActionDef,
  AppDef,
  BelongsTo,
  FieldDef,
  FieldType,
  Grant,
  HookContext,
  HookServices,
  Hooks,
  Ownership,
  PerformContext,
  Permissions,
  PrepareContext,
  ResourceDef,
  Seeder,
  Transitions,
} from './model/types.js';
export type { VersionDef } from './model/versions.js';
export type { FieldMapping, VersionChange } from './model/version-changes.js';
export type { StoredRecord } from './model/records.js';
export type { CredentialKind, Principal } from './model/principal.js';
export { MAX_AMOUNT } from './model/money.js';
export { AppError, isAppError, type ErrorDetail } from './errors/app-error.js';
export type { ErrorCode } from './errors/catalog.js';
