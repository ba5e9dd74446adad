// Development conveniences kept beside the SQLite file: the generated admin key (and the secret of earlier builds).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Reads `name` from the data directory, creating it with `make()` (mode 0600) the first time. */
export function persistentValue(dataFile: string | undefined, name: string, make: () => string): string {
  if (!dataFile) return make();
  const dir = dirname(dataFile);
  const path = join(dir, name);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  // Owner-only, like the database beside it (src/store/sqlite/sqlite-store.ts).
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const value = make();
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return value;
}

/** `name` in the data directory if it exists there; nothing is created. */
export function existingValue(dataFile: string | undefined, name: string): string | undefined {
  if (!dataFile) return undefined;
  const path = join(dirname(dataFile), name);
  return existsSync(path) ? readFileSync(path, 'utf8').trim() : undefined;
}

export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}
