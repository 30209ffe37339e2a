/**
 * The conntrack entry a traced flow created, read with `conntrack -L -p tcp --orig-port-src <sport>` in the netns
 * that tracked it: the original and reply tuples show the NAT applied (DNAT when the reply comes from elsewhere than
 * the original destination, SNAT/masquerade when it goes back to elsewhere than the original source).
 */
export interface ConntrackEntry {
  proto: string;
  /** TCP state (SYN_SENT, ESTABLISHED, CLOSE, …) when the entry has one */
  state?: string;
  orig: { src: string; dst: string; sport: number; dport: number };
  reply: { src: string; dst: string; sport: number; dport: number };
  /** [ASSURED], [UNREPLIED], … without brackets */
  flags: string[];
  /** as conntrack printed it */
  text: string;
}

/** one line of `conntrack -L` (default output) */
export function parseConntrackLine(line: string): ConntrackEntry | undefined {
  const toks = line.trim().split(/\s+/);
  if (toks.length < 4 || !/^[a-z]+$/.test(toks[0]!)) return undefined;
  const tuples: Array<Record<string, string>> = [];
  let state: string | undefined;
  const flags: string[] = [];
  for (const t of toks.slice(3)) {
    const eq = t.indexOf('=');
    if (eq > 0) {
      const k = t.slice(0, eq);
      if (k === 'src') tuples.push({});
      if (tuples.length > 0 && ['src', 'dst', 'sport', 'dport'].includes(k)) tuples[tuples.length - 1]![k] = t.slice(eq + 1);
    } else if (/^\[.*\]$/.test(t)) flags.push(t.slice(1, -1));
    else if (tuples.length === 0 && /^[A-Z_]+$/.test(t)) state = t;
  }
  const [o, r] = tuples;
  if (!o || !r || !o.src || !r.src) return undefined;
  const tuple = (x: Record<string, string>) => ({ src: x.src!, dst: x.dst!, sport: Number(x.sport), dport: Number(x.dport) });
  const e: ConntrackEntry = { proto: toks[0]!, orig: tuple(o), reply: tuple(r), flags, text: line.trim() };
  if (state) e.state = state;
  return e;
}

export function parseConntrack(stdout: string): ConntrackEntry[] {
  return stdout.split('\n').flatMap((l) => {
    const e = parseConntrackLine(l);
    return e ? [e] : [];
  });
}

/** what NAT the entry shows, in words ("" when none) */
export function natOf(e: ConntrackEntry): string {
  const fmt = (a: string, p: number) => (a.includes(':') ? `[${a}]:${p}` : `${a}:${p}`);
  const out: string[] = [];
  if (e.reply.src !== e.orig.dst || e.reply.sport !== e.orig.dport)
    out.push(`DNAT ${fmt(e.orig.dst, e.orig.dport)} → ${fmt(e.reply.src, e.reply.sport)}`);
  if (e.reply.dst !== e.orig.src || e.reply.dport !== e.orig.sport)
    out.push(`SNAT ${fmt(e.orig.src, e.orig.sport)} → ${fmt(e.reply.dst, e.reply.dport)}`);
  return out.join(', ');
}
