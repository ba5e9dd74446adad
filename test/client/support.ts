// Test support for canon-client: the built package (packages/client/dist, what npm ships) loaded from the compiled tests, and a fetch that records what the client sends.
import type * as ClientModule from '../../packages/client/dist/index.js';

/**
 * The package as built by scripts/build.mjs. The type import names it from this source file; at run time the
 * compiled test sits one level deeper (dist/test/client), hence the URL with one more `..`.
 */
export const canon: typeof ClientModule = await import(new URL('../../../packages/client/dist/index.js', import.meta.url).href);
export type { ClientModule };

export interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  credentials: string | undefined;
  redirect: string | undefined;
}

/** A fetch that records every request it passes on (to the global fetch, or `inner`). */
export function recordingFetch(inner: typeof fetch = globalThis.fetch): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
    sent.push({
      method: init?.method ?? 'GET',
      url: String(input),
      headers,
      body: typeof init?.body === 'string' ? init.body : undefined,
      credentials: init?.credentials,
      redirect: init?.redirect,
    });
    return inner(input, init);
  };
  return { fetch: wrapped, sent };
}

/** A path with every UUID replaced by `{id}`: the document's path template of a request. */
export function template(url: string): string {
  return new URL(url).pathname.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '{id}');
}
