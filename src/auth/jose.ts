// jose, imported the first time a bearer token or a signing key is handled: most processes never do (docs/architecture.md, "What a process loads").
import type * as Jose from 'jose';

let loaded: Promise<typeof Jose> | undefined;

/** The jose module, loaded once per process. */
export function jose(): Promise<typeof Jose> {
  loaded ??= import('jose');
  return loaded;
}
