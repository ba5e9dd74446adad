// The key a client address is counted under for per-IP limits: one spelling per address, IPv6 clients grouped by network.
import ipaddr from 'ipaddr.js';

/**
 * `::ffff:198.51.100.7` and `198.51.100.7` are one client, and so are `2001:db8::1` and
 * `2001:0db8:0:0:0:0:0:1`: the address is parsed (ipaddr.js) and written one way. An IPv6 client
 * usually holds a whole /64 (RFC 6177), so counting single addresses would give it 2^64 budgets:
 * IPv6 addresses are counted by their first `ipv6Prefix` bits. A value that is no address (a proxy's
 * header gone wrong) is counted as it is, in lower case.
 */
export function addressKey(address: string, ipv6Prefix: number): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return address.toLowerCase();
  }
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.map((part, i) => {
    const bits = Math.min(16, Math.max(0, ipv6Prefix - 16 * i));
    return bits === 0 ? 0 : part & ((0xffff << (16 - bits)) & 0xffff);
  });
  return ipv6Prefix >= 128 ? new ipaddr.IPv6(parts).toString() : `${new ipaddr.IPv6(parts).toString()}/${ipv6Prefix}`;
}
