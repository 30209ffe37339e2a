/** CIDR arithmetic for the lab: validity of the addresses and prefixes a conflist names, and the "does this conflist share a subnet with a live pod" check (IPv4 and IPv6). */
import { isIP } from 'node:net';

interface Net {
  family: 4 | 6;
  base: bigint;
  bits: number;
}

function toBig(ip: string): bigint | undefined {
  const family = isIP(ip);
  if (family === 4) return ip.split('.').reduce((acc, o) => (acc << 8n) + BigInt(Number(o)), 0n);
  if (family !== 6) return undefined;
  const [head, tail] = ip.includes('::') ? (ip.split('::') as [string, string]) : [ip, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  // an embedded IPv4 tail (::ffff:1.2.3.4) counts as two groups
  const expand = (groups: string[]) =>
    groups.flatMap((g) =>
      g.includes('.') ? [((Number(toBig(g)) >>> 16) & 0xffff).toString(16), (Number(toBig(g)) & 0xffff).toString(16)] : [g],
    );
  const hh = expand(h);
  const tt = expand(t);
  const groups = tail === undefined ? hh : [...hh, ...Array(8 - hh.length - tt.length).fill('0'), ...tt];
  return groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g || '0', 16)), 0n);
}

export function parseCidr(cidr: string): Net | undefined {
  const [ip, len] = cidr.split('/');
  if (!ip) return undefined;
  const family = isIP(ip);
  if (family !== 4 && family !== 6) return undefined;
  const max = family === 4 ? 32 : 128;
  const bits = len === undefined ? max : Number(len);
  if (!Number.isInteger(bits) || bits < 0 || bits > max) return undefined;
  const value = toBig(ip)!;
  const shift = BigInt(max - bits);
  return { family, base: (value >> shift) << shift, bits };
}

/** true when the two networks (or addresses) have an address in common */
export function overlaps(a: string, b: string): boolean {
  const x = parseCidr(a);
  const y = parseCidr(b);
  if (!x || !y || x.family !== y.family) return false;
  const max = x.family === 4 ? 32 : 128;
  const bits = Math.min(x.bits, y.bits);
  const shift = BigInt(max - bits);
  return x.base >> shift === y.base >> shift;
}

function formatBig(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((value >> s) & 0xffffn).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/**
 * Why `text` is not an address/prefix the plugins would parse (Go's net.ParseCIDR: an IP, "/", a length no longer
 * than the family's 32 or 128 bits), or undefined when it is one.
 */
export function cidrProblem(text: string): string | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return `${JSON.stringify(text)} is not a CIDR (address/prefix length, e.g. 10.88.0.0/16)`;
  const ip = text.slice(0, slash);
  const len = text.slice(slash + 1);
  const family = isIP(ip);
  if (family !== 4 && family !== 6) return `${JSON.stringify(text)}: ${JSON.stringify(ip)} is not an IP address`;
  const max = family === 4 ? 32 : 128;
  if (!/^[0-9]{1,3}$/.test(len) || Number(len) > max)
    return `${JSON.stringify(text)}: the prefix length must be 0-${max} for an IPv${family} address`;
  return undefined;
}

/** Why `text` is not a plain IP address, or undefined when it is one. */
export function ipProblem(text: string): string | undefined {
  return isIP(text) === 0 ? `${JSON.stringify(text)} is not an IP address` : undefined;
}

/**
 * Why host-local could not allocate from `subnet` (its Range.Canonicalize rules: a network address without host bits,
 * at least two addresses beside it), or undefined when it can. Assumes cidrProblem(subnet) passed.
 */
export function allocatableSubnetProblem(subnet: string): string | undefined {
  const net = parseCidr(subnet)!;
  const max = net.family === 4 ? 32 : 128;
  if (net.bits > max - 2) return `${subnet} is too small to allocate from (host-local needs a prefix of /${max - 2} or shorter)`;
  const given = toBig(subnet.slice(0, subnet.indexOf('/')))!;
  if (given !== net.base) return `${subnet} has host bits set; the network address for /${net.bits} is ${formatBig(net.family, net.base)}`;
  return undefined;
}

/** true when `ip` (an address) lies in `cidr` and has the same family */
export function contains(cidr: string, ip: string): boolean {
  const net = parseCidr(cidr);
  const addr = parseCidr(ip);
  return !!net && !!addr && net.family === addr.family && overlaps(cidr, ip);
}
