// Parses `canon check` arguments into CheckOptions; bad input is a clear error naming the flag.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { unknownPatterns } from './rules/index.js';
import type { CheckOptions } from './types.js';

export const CHECK_USAGE = `usage: canon check <base-url> [options]

Audits a live HTTP API against the conventions (docs/check.md lists the rules). Read-only unless --write.

options:
  --header 'Name: value'  sent on every request, e.g. credentials (repeatable)
  --json                  print the report as JSON (for CI)
  --write                 also run the rules that create objects (each one is deleted again)
  --burst N               send up to N requests to provoke a 429 (runs last)
  --max-requests N        stop probing after N requests (default 300)
  --only ids              comma-separated rule ids or prefixes to run (e.g. pagination,errors.body)
  --skip ids              rule ids or prefixes to leave out
  --path P                a collection path to probe, relative to the base URL (repeatable)
  --openapi FILE          discover collections from this OpenAPI document (JSON)
  --timeout MS            per-request time limit (default 10000)
  --rate N                at most N requests per second (default 50)
  --ca FILE               trust this CA certificate (PEM) besides the system store, for a development HTTPS server
exit status: 0 when no rule fails, 1 when one does (an "error" is the checker's own trouble and does not fail), 2 on bad usage`;

/** A usage error: the CLI prints it with the usage and exits 2. */
export class UsageError extends Error {}

function positiveInt(flag: string, value: string | undefined, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${flag} must be a positive integer, got "${value}"`);
  return Number(value);
}

function readCa(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--ca ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const list = (values: string[] | undefined): string[] =>
  (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);

export function parseCheckArgs(argv: string[]): CheckOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        header: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        write: { type: 'boolean' },
        burst: { type: 'string' },
        'max-requests': { type: 'string' },
        only: { type: 'string', multiple: true },
        skip: { type: 'string', multiple: true },
        path: { type: 'string', multiple: true },
        openapi: { type: 'string' },
        timeout: { type: 'string' },
        rate: { type: 'string' },
        ca: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'the base URL is missing' : `one base URL expected, got ${positionals.join(' ')}`);
  let baseUrl: URL;
  try {
    baseUrl = new URL(positionals[0]!);
  } catch {
    throw new UsageError(`"${positionals[0]}" is not a URL (give e.g. http://127.0.0.1:3000)`);
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') throw new UsageError(`the base URL must be http:// or https://, got ${baseUrl.protocol}`);
  const headers = (values.header ?? []).map((h): [string, string] => {
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(h);
    if (!m) throw new UsageError(`--header must be 'Name: value', got "${h}"`);
    return [m[1]!, m[2]!.trim()];
  });
  const only = list(values.only);
  const skip = list(values.skip);
  const unknown = unknownPatterns([...only, ...skip]);
  if (unknown.length) throw new UsageError(`unknown rule id ${unknown.join(', ')} (docs/check.md lists them)`);
  return {
    baseUrl,
    headers,
    json: values.json === true,
    write: values.write === true,
    burst: positiveInt('--burst', values.burst, undefined),
    maxRequests: positiveInt('--max-requests', values['max-requests'], 300)!,
    only,
    skip,
    paths: values.path ?? [],
    openapi: values.openapi,
    timeoutMs: positiveInt('--timeout', values.timeout, 10_000)!,
    rate: positiveInt('--rate', values.rate, 50)!,
    ca: values.ca === undefined ? undefined : readCa(values.ca),
  };
}
