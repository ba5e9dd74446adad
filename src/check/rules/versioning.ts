// Deprecation rule (spec §9 Versioning rule 4): a deprecated version says so on its responses, with Deprecation and Sunset.
import { linksOf, versionOf } from '../links.js';
import type { Evidence, Exchange } from '../types.js';
import { fail, notApplicable, pass, seen } from '../verdict.js';
import type { Rule } from './rule.js';

/** RFC 9745 `@<unix seconds>`; earlier drafts used an HTTP-date or `true`. Undefined when unreadable. */
function deprecationDate(value: string): number | null | undefined {
  const v = value.trim();
  if (/^@-?\d+$/.test(v)) return Number(v.slice(1)) * 1000;
  if (v.toLowerCase() === 'true') return null;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

export const deprecation: Rule = {
  id: 'versioning.deprecation',
  title: 'Every response of a deprecated version carries Deprecation and Sunset (an HTTP-date, not before the deprecation)',
  section: 'spec §9 Versioning rule 4 (Deprecation and Sunset headers, optionally a link to a notice); RFC 9745, RFC 8594',
  run: async (ctx) => {
    // Judged on everything the run saw under the versions of the collections found: every rule's requests are
    // samples of those versions' answers (discovery's guesses, like /v1/openapi.json, count only for those).
    const versions = new Set(ctx.collections.map((c) => c.version ?? '(unversioned)'));
    const byVersion = new Map<string, Exchange[]>();
    for (const x of ctx.probe.log) {
      const v = versionOf(x.url) ?? '(unversioned)';
      if (versions.has(v)) byVersion.set(v, [...(byVersion.get(v) ?? []), x]);
    }
    const evidence: Evidence[] = [];
    const problems: string[] = [];
    const deprecated: string[] = [];
    for (const [version, xs] of byVersion) {
      const marked = xs.filter((x) => x.headers.deprecation !== undefined);
      const flagged = xs.filter((x) => /^true$/i.test(x.headers['x-deprecated'] ?? ''));
      if (marked.length === 0) {
        if (flagged.length) problems.push(`${version}: X-Deprecated without a Deprecation header`);
        if (flagged.length) evidence.push(seen(flagged[0]!, 'X-Deprecated: true, no Deprecation'));
        continue;
      }
      deprecated.push(version);
      const x = marked[0]!;
      const dep = deprecationDate(x.headers.deprecation!);
      const sunset = x.headers.sunset === undefined ? undefined : Date.parse(x.headers.sunset);
      const link = linksOf(x).find((l) => l.rel === 'deprecation' && l.from === 'header');
      evidence.push(seen(x, `Deprecation: ${x.headers.deprecation}, Sunset: ${x.headers.sunset ?? 'absent'}, Link rel=deprecation: ${link?.href ?? 'absent'}`));
      if (dep === undefined) problems.push(`${version}: Deprecation ${x.headers.deprecation} is neither @<unix seconds> nor a date`);
      if (sunset === undefined || Number.isNaN(sunset))
        problems.push(`${version}: ${sunset === undefined ? 'no Sunset header' : `Sunset ${x.headers.sunset} is not an HTTP-date`}`);
      else if (typeof dep === 'number' && sunset < dep) problems.push(`${version}: Sunset is before the deprecation`);
      const unmarked = xs.filter((y) => y.headers.deprecation === undefined);
      if (unmarked.length) {
        problems.push(`${version}: ${unmarked.length} of ${xs.length} responses lack Deprecation`);
        evidence.push(seen(unmarked[0]!, 'no Deprecation header, unlike the others of this version'));
      }
      if (link) {
        const target = ctx.probe.follow(link.href, x.url);
        if (target) {
          const doc = await ctx.probe.send('GET', target);
          evidence.push(seen(doc, 'the deprecation notice'));
          if (doc.status !== 200) problems.push(`${version}: the deprecation link answered ${doc.status}`);
        }
      }
    }
    if (problems.length) return fail(problems.join('; '), evidence);
    if (deprecated.length === 0) return notApplicable(`no response carried Deprecation (versions probed: ${[...versions].join(', ') || 'none'})`, evidence);
    return pass(`deprecated: ${deprecated.join(', ')}; every response of it says so`, evidence);
  },
};
