// The shapes `canon check` passes around: options, exchanges with the server under test, verdicts and the report.

/** What a rule concluded; `error` is the checker's own trouble (timeouts, resets, its budget), never the server's fault. */
export type Status = 'pass' | 'fail' | 'not-applicable' | 'error';

export interface CheckOptions {
  /** The API under test, e.g. `http://127.0.0.1:3000` or `https://api.example.com/v2`. */
  baseUrl: URL;
  /** Sent on every request (credentials, usually): `[name, value]`. */
  headers: Array<[string, string]>;
  json: boolean;
  /** Rules that create objects (and delete them again) run only with this. */
  write: boolean;
  /** Requests of the 429 probe; undefined: the probe does not run. */
  burst: number | undefined;
  maxRequests: number;
  /** Rule ids or id prefixes (`pagination` selects every `pagination.*` rule). */
  only: string[];
  skip: string[];
  /** Paths (relative to the base URL) to start discovery from, besides the root. */
  paths: string[];
  /** A local OpenAPI document (JSON) to discover from. */
  openapi: string | undefined;
  /** Per-request time limit. */
  timeoutMs: number;
  /** At most this many requests per second. */
  rate: number;
  /** PEM text of CA certificates to trust besides the system store (a development HTTPS server's own CA). */
  ca: string | undefined;
}

/** One request made and what came back. */
export interface Exchange {
  method: string;
  /** The URL as requested (after same-origin redirects: the last one). */
  url: URL;
  requestHeaders: Record<string, string>;
  status: number;
  /** Lower-case names; repeated headers joined with `, ` (Set-Cookie kept apart in setCookies). */
  headers: Record<string, string>;
  setCookies: string[];
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: unknown;
  /** The body was cut at the checker's size cap. */
  truncated: boolean;
}

/** One line of evidence: the request made (`GET /v2/products?limit=2`), the status seen, and what it shows. */
export interface Evidence {
  request: string;
  status?: number;
  note: string;
}

export interface Verdict {
  status: Status;
  /** One sentence: why this status. */
  summary: string;
  evidence: Evidence[];
}

export interface RuleResult extends Verdict {
  id: string;
  title: string;
  section: string;
}

export interface Report {
  baseUrl: string;
  startedAt: string;
  durationMs: number;
  requests: number;
  write: boolean;
  discovery: { openapi: string | undefined; collections: string[]; items: string[]; notes: string[] };
  rules: RuleResult[];
  /** What the checker created and deleted again (with --write), and anything it could not delete. */
  cleanup: Evidence[];
  summary: Record<Status, number>;
}
