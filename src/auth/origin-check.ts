// Whether a browser request comes from the server's own site (OWASP CSRF Prevention: verify the source origin; Fetch Metadata).

export interface RequestSource {
  origin: string | undefined;
  secFetchSite: string | undefined;
  referer: string | undefined;
}

/** The origin (`scheme://host[:port]`) of a URL, or undefined when it is not an absolute http(s) URL. */
export function originOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why a request must not be taken as coming from the server's own site, or undefined when it may be.
 * Browsers say where a request comes from: `Origin` on every cross-origin POST (and on same-origin ones in
 * every current browser), `Sec-Fetch-Site` in current browsers, `Referer` in most others. The first one
 * present decides: an origin `allowed` refuses, `Origin: null` (sandboxed documents,
 * privacy redirects), or a fetch that is not same-origin is refused. A request with none of them comes from
 * no browser (curl, a server) and cannot carry a victim's cookies against their will, so it passes.
 */
export function crossSiteReason(source: RequestSource, allowed: (origin: string) => boolean): string | undefined {
  const ok = (origin: string | undefined): boolean => origin !== undefined && allowed(origin);
  if (source.origin !== undefined) {
    if (source.origin === 'null') return 'Origin is null';
    return ok(originOf(source.origin)) ? undefined : `Origin ${source.origin} is not this server's`;
  }
  if (source.secFetchSite !== undefined) {
    return source.secFetchSite === 'same-origin' || source.secFetchSite === 'none' ? undefined : `Sec-Fetch-Site is ${source.secFetchSite}`;
  }
  if (source.referer !== undefined) return ok(originOf(source.referer)) ? undefined : 'the Referer is not this server’s';
  return undefined;
}
