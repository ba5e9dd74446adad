// The configuration file (DESIGN §2: `canon.config.ts|js|json`): found, read and checked, then handed on as environment values beneath the real environment.
//
// The file takes exactly the settings the environment does, under one key each: the variable's name without
// `CANON_`, in camelCase (`PORT` → `port`, `DATABASE_URL` → `databaseUrl`, `CANON_RATE_LIMIT_PER_IP` →
// `rateLimitPerIp`), except `CANON_CONFIG`, the app module, which is `app` (a `config` key in a config file
// would read as the file itself). Values are turned back into the environment's text and parsed by `fromEnv`,
// so a setting means the same and is checked the same wherever it is written, and a setting added to
// `fromEnv` is a file key at once: the keys are the names `fromEnv` reads.
//
// Precedence, later winning: defaults, the file, the environment, flags. The file is committed with a project
// and the environment is set per deployment, so the environment overrides the file (as with dotenv files and
// twelve-factor practice); flags are typed for one run and win over both (DESIGN §2).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fromEnv } from './config.js';

/** Looked up in the working directory, in this order; more than one is an error, not a silent choice. */
export const CONFIG_FILE_NAMES = ['canon.config.ts', 'canon.config.js', 'canon.config.json'] as const;

export interface ConfigFile {
  /** The file, as it will be named in messages. */
  path: string;
  /** Its settings as environment variables (`{ PORT: '8080' }`). */
  env: Record<string, string>;
}

/** Names the variable a key of the file stands for. */
const EXCEPTIONS: Record<string, string> = { CANON_CONFIG: 'app' };

/** The environment variables `fromEnv` reads, found by letting it read an environment that records each name. */
function settingNames(): string[] {
  const names = new Set<string>();
  const recorder = new Proxy({} as NodeJS.ProcessEnv, {
    get(_target, key) {
      if (typeof key === 'string') names.add(key);
      return undefined;
    },
  });
  fromEnv(recorder);
  return [...names];
}

/** `CANON_RATE_LIMIT_PER_IP` → `rateLimitPerIp`. */
export function fileKey(envName: string): string {
  return (
    EXCEPTIONS[envName] ??
    envName
      .replace(/^CANON_/, '')
      .toLowerCase()
      .replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase())
  );
}

let keys: Map<string, string> | undefined;
/** File key → environment variable, for every setting. */
export function fileKeys(): Map<string, string> {
  keys ??= new Map(settingNames().map((name) => [fileKey(name), name]));
  return keys;
}

/**
 * The configuration file to use: `explicit` (--config-file, CANON_CONFIG_FILE) when given, else the one of
 * CONFIG_FILE_NAMES in `cwd`; undefined when there is none. Relative paths inside it (`app`, TLS files,
 * `sqlite:` URLs) are relative to the working directory, as in the environment.
 */
export async function loadConfigFile(cwd: string, explicit: string | undefined): Promise<ConfigFile | undefined> {
  let path: string;
  if (explicit) {
    path = isAbsolute(explicit) ? explicit : resolve(cwd, explicit);
    if (!existsSync(path) || !statSync(path).isFile()) throw new Error(`configuration file ${explicit}: no such file`);
  } else {
    const found = CONFIG_FILE_NAMES.filter((name) => existsSync(join(cwd, name)));
    if (found.length === 0) return undefined;
    if (found.length > 1) throw new Error(`${found.join(' and ')} are both in ${cwd}: keep one configuration file`);
    path = join(cwd, found[0]!);
  }
  const shown = explicit ?? basename(path);
  return { path: shown, env: settingsOf(shown, await read(path, shown)) };
}

/** The file's content: JSON parsed, a module's default export. */
async function read(path: string, shown: string): Promise<unknown> {
  if (path.endsWith('.json')) {
    try {
      return JSON.parse(readFileSync(path, 'utf8')) as unknown;
    } catch (err) {
      throw new Error(`${shown}: not valid JSON (${(err as Error).message})`);
    }
  }
  if (!/\.(c|m)?(j|t)s$/.test(path)) throw new Error(`${shown}: a configuration file is .json, .js (.mjs, .cjs) or .ts`);
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.(c|m)?ts$/.test(path)) {
      // Node loads TypeScript itself from 22.18 and 23.6 (types stripped); older releases need the file compiled.
      throw new Error(
        `${shown}: Node.js ${process.version} cannot load TypeScript files; write canon.config.js or canon.config.json instead, compile this file to JavaScript, or run Node.js 22.18 or newer, which loads .ts files itself`,
      );
    }
    throw new Error(`${shown}: ${(err as Error).message}`);
  }
  if (!('default' in mod)) throw new Error(`${shown}: export the settings as the default export (export default { port: 8080 })`);
  return mod.default;
}

/** The file's settings as environment values, each checked by the same parser as the environment's. */
function settingsOf(shown: string, content: unknown): Record<string, string> {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) {
    throw new Error(`${shown}: the settings must be an object, such as { "port": 8080 }`);
  }
  const known = fileKeys();
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(content)) {
    const name = known.get(key);
    if (!name) throw new Error(`${shown}: unknown setting "${key}"${suggestion(key, known)} (docs/configuration.md lists them)`);
    if (value === '') throw new Error(`${shown}: "${key}" is empty; leave it out to keep the default`);
    const text = asText(value);
    if (text === undefined) throw new Error(`${shown}: "${key}" must be a string, a number, true or false, or a list of them`);
    // Checked alone, with partners it may need present (a TLS certificate needs its key), so the error is this key's.
    try {
      fromEnv({ CANON_TLS_CERT: 'cert.pem', CANON_TLS_KEY: 'key.pem', [name]: text });
    } catch (err) {
      const message = (err as Error).message;
      throw new Error(`${shown}: ${message.includes(name) ? message.replaceAll(name, `"${key}"`) : `"${key}": ${message}`}`);
    }
    env[name] = text;
  }
  return env;
}

/** JSON values as the environment would spell them; undefined for what it cannot hold. */
function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  // Lists (trusted origins, proxies, a retry schedule) are the environment's comma lists.
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))) {
    return value.join(',');
  }
  return undefined;
}

/** ` (did you mean "port"?)` for a key one or two edits away, or written as its environment variable. */
function suggestion(key: string, known: Map<string, string>): string {
  for (const [k, name] of known) if (name === key || name === key.toUpperCase()) return ` (did you mean "${k}"?)`;
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known.keys()) {
    const d = distance(key.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best ? ` (did you mean "${best}"?)` : '';
}

/** Levenshtein distance, for the suggestion only (keys are short). */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** The environment the settings are read from: the file's values beneath the real environment's (an empty variable counts as unset). */
export function withFile(file: ConfigFile | undefined, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!file) return env;
  const out: NodeJS.ProcessEnv = { ...file.env };
  for (const [name, value] of Object.entries(env)) if (value !== undefined && value !== '') out[name] = value;
  return out;
}
