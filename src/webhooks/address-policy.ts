// Where webhooks may be delivered (issue 15, SSRF): https URLs whose every address is public unicast, checked at registration and again on the address actually connected to.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

export type Verdict = { allowed: true } | { allowed: false; reason: string };

/**
 * Whether an IP address may receive webhooks: public unicast only. Refused: private (RFC 1918), loopback,
 * link-local (the cloud metadata endpoints among them), CGNAT (RFC 6598), unique-local IPv6 (RFC 4193),
 * unspecified and "this network" (0.0.0.0/8, ::), broadcast, multicast, reserved and documentation ranges,
 * and IPv6 transition forms (6to4, Teredo, NAT64) that can reach IPv4 space; an IPv4-mapped or
 * IPv4-compatible IPv6 address is judged by the IPv4 address inside it.
 */
export function addressVerdict(address: string): Verdict {
  if (!ipaddr.isValid(address)) return { allowed: false, reason: `${address} is not an IP address` };
  const parsed = ipaddr.parse(address);
  const ip = parsed.kind() === 'ipv6' ? (embeddedIpv4(parsed as ipaddr.IPv6) ?? parsed) : parsed;
  const range = ip.range();
  if (range === 'unicast') return { allowed: true };
  return { allowed: false, reason: ip === parsed ? `${address} is in a ${range} range` : `${address} is ${ip.toString()}, in a ${range} range` };
}

/**
 * The IPv4 address an IPv6 address carries in its last 32 bits when it is IPv4-mapped (`::ffff:a.b.c.d`,
 * RFC 4291 §2.5.5.2) or IPv4-compatible (`::a.b.c.d`, the first 96 bits zero, deprecated by RFC 4291
 * §2.5.5.1 but still parsed by every URL parser: `[::127.0.0.1]` becomes `[::7f00:1]`, which ipaddr.js
 * calls unicast). `::` and `::1` keep their IPv6 meaning (unspecified, loopback).
 */
function embeddedIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address();
  const p = ip.parts;
  if (p[0] || p[1] || p[2] || p[3] || p[4] || p[5] || (p[6] === 0 && p[7]! <= 1)) return undefined;
  return new ipaddr.IPv4([p[6]! >> 8, p[6]! & 0xff, p[7]! >> 8, p[7]! & 0xff]);
}

export type Resolver = (hostname: string) => Promise<string[]>;

/** Every address the system resolver gives for `hostname` (IPv4 and IPv6). */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses: LookupAddress[]) => (err ? reject(err) : resolve(addresses.map((a) => a.address))));
  });

export interface UrlPolicy {
  /** CANON_WEBHOOK_ALLOW_PRIVATE: lifts the address check only (for receivers on a private network). */
  allowPrivate: boolean;
  resolve?: Resolver;
}

/**
 * Whether a webhook endpoint URL may be registered: `https:` only, no credentials in it, and every address
 * its host has now is allowed (the WHATWG URL parser has already turned `0x7f.1`, `2130706433` or `127.1`
 * into `127.0.0.1`). The address is checked again at every connection (`guardedLookup`): a name that
 * resolves elsewhere later (DNS rebinding) is refused then.
 */
export async function urlVerdict(raw: string, policy: UrlPolicy): Promise<Verdict> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { allowed: false, reason: 'is not a URL' };
  }
  if (url.protocol !== 'https:') return { allowed: false, reason: 'must be an https:// URL' };
  if (url.username || url.password) return { allowed: false, reason: 'must not carry credentials' };
  if (policy.allowPrivate) return { allowed: true };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: string[];
  if (ipaddr.isValid(host)) addresses = [host];
  else {
    try {
      addresses = await (policy.resolve ?? systemResolver)(host);
    } catch {
      return { allowed: false, reason: `${host} does not resolve` };
    }
    if (addresses.length === 0) return { allowed: false, reason: `${host} does not resolve` };
  }
  for (const address of addresses) {
    const verdict = addressVerdict(address);
    if (!verdict.allowed) return verdict;
  }
  return { allowed: true };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for outbound sockets (`net.connect`, undici's `connect`) that resolves as the system does and
 * refuses, with an error, any address that is not allowed: the check happens on the address the socket is
 * about to connect to, so what a name resolved to at registration does not matter.
 */
export function guardedLookup(policy: UrlPolicy) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    const resolve = policy.resolve ?? systemResolver;
    resolve(hostname)
      .then((addresses) => {
        const verdicts = addresses.map((address) => ({ address, verdict: policy.allowPrivate ? ({ allowed: true } as Verdict) : addressVerdict(address) }));
        const usable = verdicts.filter((v) => v.verdict.allowed).map((v) => v.address);
        if (usable.length === 0) {
          const reasons = verdicts.map((v) => (v.verdict.allowed ? v.address : v.verdict.reason)).join('; ') || 'no address';
          callback(Object.assign(new Error(`refused to connect to ${hostname}: ${reasons}`), { code: 'EADDRNOTALLOWED' }), '');
          return;
        }
        const entries = usable.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
        if (options.all) callback(null, entries);
        else callback(null, entries[0]!.address, entries[0]!.family);
      })
      .catch((err: NodeJS.ErrnoException) => callback(err, ''));
  };
}
