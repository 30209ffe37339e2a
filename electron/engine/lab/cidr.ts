/** CIDR arithmetic for the lab's "does this conflist share a subnet with a live pod" check (IPv4 and IPv6). */
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
