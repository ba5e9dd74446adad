// Development conveniences beside the SQLite file: the development admin key for `cat`, and what earlier builds kept there.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Writes `value` to `name` in the data directory (mode 0600, owner-only like the database beside it) unless it
 * holds it already. Through a temporary file and a rename, so a process starting beside another never reads
 * half a value.
 */
export function keepBeside(dataFile: string | undefined, name: string, value: string): void {
  if (!dataFile) return;
  const dir = dirname(dataFile);
  const path = join(dir, name);
  if (existsSync(path) && readFileSync(path, 'utf8').trim() === value) return;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${value}\n`, { mode: 0o600 });
  renameSync(temporary, path);
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
