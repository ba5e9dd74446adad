// Checks a response the suite received against its operation in the catalog (issue 27.3): the status is declared, the body matches its schema, declared headers are there.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Catalog } from '../../src/catalog/catalog.js';
import { eventSchema, eventTypes, thinEventSchema } from '../../src/catalog/event-catalog.js';
import { responseHeaders } from '../../src/catalog/response-headers.js';
import { ERROR_CATALOG, type ErrorCode } from '../../src/errors/catalog.js';
import type { CompiledModel } from '../../src/model/compile.js';
import { ERROR_SCHEMA } from '../../src/model/output-schema.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;
// Not strict: schemas carry documentation keywords (examples, readOnly) the validator need not know.
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, allowUnionTypes: true }));
const compiled = new WeakMap<object, ValidateFunction>();
/**
 * Validators by schema text too: each server a file starts builds its own catalog, with schema objects equal to
 * the last server's, and compiling them again was most of what checking cost (a tenth of permission-matrix's CPU).
 */
const compiledByText = new Map<string, ValidateFunction>();

function validatorOf(schema: object): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    const text = JSON.stringify(schema);
    v = compiledByText.get(text);
    if (!v) compiledByText.set(text, (v = ajv.compile(schema)));
    compiled.set(schema, v);
  }
  return v;
}

/** Codes any request may get before it reaches an operation: no route, a method the path lacks, a version not served or past its sunset. */
const BEFORE_ROUTING: ReadonlySet<ErrorCode> = new Set([
  'ROUTE_NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'UNSUPPORTED_VERSION',
  'VERSION_SUNSET',
  'BAD_REQUEST',
  'URI_TOO_LONG',
  'HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'SERVICE_UNAVAILABLE',
  'INTERNAL_ERROR',
  'PAYLOAD_TOO_LARGE',
  'NOT_ACCEPTABLE',
  'RATE_LIMITED',
]);

/**
 * Events checked against the event catalog: their type is one it lists, their payload its schema in the version
 * they are shown in. The feed's pages are sampled; `all` checks every one (a stream's frames, webhook deliveries),
 * and `thin` accepts a delivery's thin form (over 64 KiB) by its own schema.
 */
export function eventViolations(model: CompiledModel, events: unknown[], options: { all?: boolean; thin?: boolean } = {}): string[] {
  const out: string[] = [];
  const types = new Map(eventTypes(model).map((e) => [e.type, e]));
  for (const event of (options.all ? events : events.slice(0, SAMPLE * 3)) as Array<{ type?: string; api_version?: string; thin?: unknown }>) {
    const type = types.get(event.type ?? '');
    const version = model.versions.find((v) => v.date === event.api_version);
    if (!type || !version) {
      out.push(`event ${String(event.type)} (${String(event.api_version)}) is not in the event catalog`);
      continue;
    }
    const thin = options.thin === true && event.thin === true;
    const key = `${version.name} ${type.type}${thin ? ' thin' : ''}`;
    let validate = eventValidators.get(model)?.get(key);
    if (!validate) {
      validate = validatorOf(thin ? thinEventSchema() : eventSchema(model, version, type));
      if (!eventValidators.has(model)) eventValidators.set(model, new Map());
      eventValidators.get(model)!.set(key, validate);
    }
    if (!validate(event)) out.push(`event ${key}: ${ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 400)}`);
  }
  return out;
}
const eventValidators = new WeakMap<CompiledModel, Map<string, ValidateFunction>>();

/** How many items of a page are checked. */
const SAMPLE = 3;

export interface Received {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: unknown;
}

/** What is wrong with `res` as an answer to `method path`, or an empty list. */
export function violations(catalog: Catalog, model: CompiledModel, method: string, path: string, res: Received): string[] {
  const out: string[] = [];
  if (res.headers['x-request-id'] === undefined) out.push('no X-Request-Id');
  const type = res.headers['content-type'] ?? '';
  const json = /^application\/([a-z.0-9]+\+)?json/.test(type);
  if (res.status >= 400 && json && method !== 'HEAD') {
    // OAuth's token endpoint answers in RFC 6749's body, not ours.
    if (path.startsWith('/oauth/token')) return out;
    if (!validatorOf(ERROR_SCHEMA)(res.body)) out.push(`error body: ${ajv.errorsText(validatorOf(ERROR_SCHEMA).errors)}`);
    const code = (res.body as { error?: { code?: ErrorCode } } | undefined)?.error?.code;
    if (code === undefined) return out;
    if (ERROR_CATALOG[code]?.status !== res.status) out.push(`${code} is answered with ${res.status}, the catalog says ${ERROR_CATALOG[code]?.status}`);
    const op = catalog.find(method, path);
    if (op && !op.errors.includes(code) && !BEFORE_ROUTING.has(code)) out.push(`${op.id} does not declare ${code}`);
    return out;
  }
  const op = catalog.find(method, path);
  if (!op) return out;
  if (res.status >= 400) {
    // An error that is not JSON (HEAD, a Prometheus scraper's text): its status must still be one the operation declares.
    if (!op.errors.some((c) => ERROR_CATALOG[c].status === res.status)) out.push(`${op.id} declares no error with status ${res.status}`);
    return out;
  }
  if (!(res.status in op.output)) {
    out.push(`${op.id} does not declare status ${res.status}`);
    return out;
  }
  const version = model.versions.find((v) => v.name === op.version);
  for (const h of responseHeaders(op, res.status, version?.deprecation !== undefined)) {
    if (h.required && res.headers[h.name.toLowerCase()] === undefined) out.push(`${op.id} ${res.status}: no ${h.name}`);
  }
  const schema = op.output[res.status];
  // Compressed bytes handed over undecoded (inject does not decode; fetch does) are checked where they are decoded.
  const undecoded = res.headers['content-encoding'] !== undefined && res.body === undefined;
  if (schema && json && method !== 'HEAD' && res.text !== '' && !undecoded) {
    const validate = validatorOf(schema);
    // A page's items share one schema: the first few stand for the rest (a 100-item page took 2.5 ms to check whole).
    const body = res.body as { data?: unknown };
    const sample = op.kind === 'list' && Array.isArray(body?.data) && body.data.length > SAMPLE ? { ...body, data: body.data.slice(0, SAMPLE) } : res.body;
    if (!validate(sample)) out.push(`${op.id} ${res.status} body: ${ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 600)}`);
    if (op.id === 'events.list') out.push(...eventViolations(model, (res.body as { data?: unknown[] }).data ?? []));
  }
  return out;
}
