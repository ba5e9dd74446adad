// The headers a deprecated version's responses carry (DESIGN §10): RFC 9745 Deprecation, RFC 8594 Sunset, and a Link to the migration guide.
import { AppError } from '../../errors/app-error.js';
import type { ApiVersion } from '../../model/versions.js';

/** The deprecation headers of `version`, or undefined while it is not deprecated; `publicUrl` makes the guide's link absolute. */
export function deprecationHeaders(version: ApiVersion, publicUrl: string | undefined): Record<string, string> | undefined {
  const d = version.deprecation;
  if (!d) return undefined;
  const at = (date: string): Date => new Date(`${date}T00:00:00Z`);
  const guide = d.guide.startsWith('/') ? `${publicUrl?.replace(/\/+$/, '') ?? ''}${d.guide}` : d.guide;
  return {
    // RFC 9745 §2.1: an sf-date, "@" and Unix seconds.
    deprecation: `@${at(d.date).getTime() / 1000}`,
    // RFC 8594 §3: an HTTP-date (RFC 9110 §5.6.7, IMF-fixdate).
    sunset: at(d.sunset).toUTCString(),
    // RFC 9745 §3: the deprecation link relation points at what tells clients how to move on.
    link: `<${guide}>; rel="deprecation"`,
  };
}

/**
 * Finds the deprecated version a request path names (`/v1/…`) without parsing the URL: the first segment is
 * compared with each deprecated version's prefix. Empty when no version is deprecated, so the check is free.
 */
export class VersionHeaders {
  private readonly byPrefix: Array<{ prefix: string; deprecated: Deprecated }> = [];

  constructor(versions: readonly ApiVersion[], publicUrl: string | undefined) {
    for (const v of versions) {
      const deprecated = deprecatedOf(v, publicUrl);
      if (deprecated) this.byPrefix.push({ prefix: `/${v.name}`, deprecated });
    }
  }

  forUrl(url: string): Deprecated | undefined {
    for (const { prefix, deprecated } of this.byPrefix) {
      if (url.startsWith(prefix)) {
        const next = url.charCodeAt(prefix.length);
        // `/v1`, `/v1/…`, `/v1?…` — not `/v10/…`.
        if (Number.isNaN(next) || next === 47 /* / */ || next === 63 /* ? */) return deprecated;
      }
    }
    return undefined;
  }
}

/** A deprecated version: the headers its responses carry, and when it may stop being served (Unix ms). */
export interface Deprecated {
  name: string;
  headers: Record<string, string>;
  sunsetAt: number;
}

export function deprecatedOf(version: ApiVersion, publicUrl: string | undefined): Deprecated | undefined {
  const headers = deprecationHeaders(version, publicUrl);
  return headers && version.deprecation ? { name: version.name, headers, sunsetAt: Date.parse(`${version.deprecation.sunset}T00:00:00Z`) } : undefined;
}

/** Past its sunset, under CANON_VERSION_SUNSET=enforce, a deprecated version is 410 (its headers, Link included, still say where to go). */
export function sunsetError(deprecated: Deprecated): AppError {
  return new AppError('VERSION_SUNSET', `${deprecated.name} is no longer served since ${new Date(deprecated.sunsetAt).toUTCString()}; see the migration guide in the Link header.`);
}
