// Transport rules: HSTS over HTTPS, and the attributes of every cookie the API sets (spec §5 Cookie session rules).
import type { Evidence } from '../types.js';
import { fail, notApplicable, pass, seen } from '../verdict.js';
import type { Rule } from './rule.js';

export const hsts: Rule = {
  id: 'transport.hsts',
  title: 'Over HTTPS, responses carry Strict-Transport-Security with a max-age',
  section: 'spec §5 (Secure cookies in production; mutual TLS) and §6.8 (HTTPS); RFC 6797; DESIGN §2 (HSTS)',
  run: async (ctx) => {
    if (ctx.options.baseUrl.protocol !== 'https:') return notApplicable('the base URL is not HTTPS (HSTS is ignored over HTTP)');
    const reads = ctx.collections.map((c) => c.list);
    if (reads.length === 0) return notApplicable('no collection was read');
    const evidence = reads.map((x) => seen(x, `Strict-Transport-Security: ${x.headers['strict-transport-security'] ?? 'absent'}`));
    const bad = reads.filter((x) => !/max-age=[1-9]\d*/i.test(x.headers['strict-transport-security'] ?? ''));
    return bad.length ? fail(`${bad.length} HTTPS responses without HSTS max-age`, evidence) : pass('HSTS on HTTPS responses', evidence);
  },
};

export const cookies: Rule = {
  id: 'transport.cookies',
  title: 'Cookies the API sets are HttpOnly (CSRF cookies excepted), SameSite Strict or Lax (None with Secure), Path=/, Secure over HTTPS',
  section: 'spec §5 Cookie session rules 2 and 3',
  run: async (ctx) => {
    const https = ctx.options.baseUrl.protocol === 'https:';
    const evidence: Evidence[] = [];
    const problems: string[] = [];
    for (const x of ctx.probe.log) {
      for (const cookie of x.setCookies) {
        const [pair = '', ...attrs] = cookie.split(';').map((s) => s.trim());
        const name = pair.split('=')[0]!;
        const has = (a: string): boolean => attrs.some((s) => s.toLowerCase().startsWith(a));
        const sameSite = attrs
          .find((s) => /^samesite=/i.test(s))
          ?.split('=')[1]
          ?.toLowerCase();
        const wrong: string[] = [];
        if (!has('httponly') && !/csrf|xsrf/i.test(name)) wrong.push('no HttpOnly');
        if (sameSite !== 'strict' && sameSite !== 'lax' && !(sameSite === 'none' && has('secure'))) wrong.push(`SameSite ${sameSite ?? 'absent'}`);
        if (https && !has('secure')) wrong.push('no Secure over HTTPS');
        if (!attrs.some((s) => /^path=\/$/i.test(s))) wrong.push('Path is not /');
        if (/^__Host-/.test(name) && (!has('secure') || has('domain'))) wrong.push('__Host- needs Secure and no Domain');
        evidence.push(seen(x, `Set-Cookie ${name}: ${wrong.length ? wrong.join(', ') : 'flags in order'}`));
        if (wrong.length) problems.push(`${name}: ${wrong.join(', ')}`);
      }
    }
    if (evidence.length === 0) return notApplicable('no response set a cookie (the checker does not log in)');
    return problems.length ? fail(problems.join('; '), evidence) : pass(`${evidence.length} cookies with the right flags`, evidence);
  },
};
