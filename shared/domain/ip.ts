/**
 * A strict textual IP parser with the rules of Go's net.ParseIP, which the CNI plugins (portmap's hostIP, for one)
 * use: dotted-quad IPv4 without leading zeros, IPv6 with at most one "::" and an optional dotted-quad tail, no zone
 * ("%eth0"), no brackets, no prefix length. Pure (no node:net) so the renderer's form can use it too.
 */

function isIPv4(s: string): boolean {
  const parts = s.split('.');
  if (parts.length !== 4) return false;
  return parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255);
}

function isIPv6(s: string): boolean {
  if (s.length > 45 || !/^[0-9A-Fa-f:.]+$/.test(s)) return false;
  let groups = 0;
  let text = s;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    if (!isIPv4(text.slice(lastColon + 1))) return false;
    text = text.slice(0, lastColon + 1) + '0:0'; // the IPv4 tail counts as two groups
  }
  const halves = text.split('::');
  if (halves.length > 2) return false;
  for (const half of halves) {
    if (half === '') continue;
    for (const g of half.split(':')) {
      if (!/^[0-9A-Fa-f]{1,4}$/.test(g)) return false;
      groups++;
    }
  }
  return halves.length === 2 ? groups <= 7 : groups === 8;
}

/** 4 or 6 for a valid address, 0 for anything else. */
export function ipFamilyOf(text: string): 0 | 4 | 6 {
  if (isIPv4(text)) return 4;
  if (isIPv6(text)) return 6;
  return 0;
}
