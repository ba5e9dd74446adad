// Small assertion helpers shared by the end-to-end tests: exact error responses, Allow sets, links.
import assert from 'node:assert/strict';
import { errorShape, type Response } from '../../support/harness.js';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts an exact status and error code, the §5 body (via errorShape) and an X-Request-Id header. */
export function expectError(res: Response, status: number, code: string): ReturnType<typeof errorShape> {
  assert.equal(res.status, status, `expected ${status} ${code}, got ${res.status} ${res.text}`);
  assert.ok(res.headers['x-request-id'], 'X-Request-Id header missing');
  const e = errorShape(res);
  assert.equal(e.code, code, `expected code ${code}, got ${e.code}: ${e.message}`);
  return e;
}

/** The fields named by an error's details. */
export function detailFields(e: { details?: Array<{ field: string }> }): string[] {
  return (e.details ?? []).map((d) => d.field);
}

/** An Allow header as a sorted list of methods. */
export function allowSet(value: string | undefined): string[] {
  assert.ok(value, 'Allow header missing');
  return value
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean)
    .sort();
}

/** The link with a given rel from a representation's `links`, or undefined. */
export function linkOf(body: { links?: Array<{ rel: string; href: string; method: string }> }, rel: string): { rel: string; href: string; method: string } | undefined {
  return (body.links ?? []).find((l) => l.rel === rel);
}

/** Asserts a strong, quoted ETag and returns it. */
export function strongEtag(res: Response): string {
  const etag = res.headers['etag'];
  assert.ok(etag, 'ETag header missing');
  assert.match(etag, /^"[^"]+"$/, `ETag ${etag} is not a strong quoted tag`);
  return etag;
}
