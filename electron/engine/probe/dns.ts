/**
 * DNS paths: one per nameserver of the pod, a real query sent from inside the pod's netns to <server>:53 (UDP, then
 * TCP when the answer was truncated or UDP was refused). The servers are the pod's dns_config when it names some (what
 * its resolv.conf was written from), else what its resolv.conf says (a copy of the host's). Any answer the server gave
 * for the name — NXDOMAIN included — shows the server works; REFUSED means it will not resolve for this pod.
 * docs/semantics.md#dns-paths
 */
import type { DnsQueryResult, ProbeDns, ProbePath } from '../../../shared/domain/probe';
import type { PodFacts } from '../common/pod-facts';
import type { DnsOutcome, ConnectOutcome } from '../netns/probe-net';
import type { ProbedAttachment } from './attachments';
import { familyOf, fmtAddr, newPath, type PlannedConnect, type ProbePlan } from './plan';

export const DNS_PORT = 53;

/** nameserver, search and options lines of a resolv.conf (resolv.conf(5); later `search` lines replace earlier ones) */
export function parseResolvConf(text: string): { servers: string[]; searches: string[]; options: string[] } {
  const out = { servers: [] as string[], searches: [] as string[], options: [] as string[] };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    const [key, ...rest] = line.split(/\s+/);
    if (key === 'nameserver' && rest[0]) out.servers.push(rest[0].replace(/%.*$/, ''));
    else if (key === 'search' || key === 'domain') out.searches = rest;
    else if (key === 'options') out.options.push(...rest);
  }
  return out;
}

/**
 * The name asked when the user names none: `kubernetes.default.svc.<domain>` when the searches look like a cluster's
 * (one of them is `svc.<domain>`, as a kubelet writes them), else the first search domain itself, else the root's NS.
 */
export function defaultDnsName(searches: string[]): { name: string; qtype: DnsQueryResult['qtype'] } {
  const svc = searches.find((s) => /^svc\.[^.]/.test(s));
  if (svc) return { name: `kubernetes.default.${svc.replace(/\.$/, '')}`, qtype: 'A' };
  if (searches[0]) return { name: searches[0].replace(/\.$/, ''), qtype: 'A' };
  return { name: '.', qtype: 'NS' };
}

/** the pod's resolver configuration: dns_config when it names servers, else its resolv.conf */
export function podDns(rec: PodFacts, resolvConf: string | undefined, name?: string): ProbeDns {
  const cfg = rec.config.dns_config;
  const fromFile = resolvConf !== undefined ? parseResolvConf(resolvConf) : { servers: [], searches: [], options: [] };
  const fromConfig = (cfg?.servers?.length ?? 0) > 0;
  const servers = fromConfig ? [...cfg!.servers] : fromFile.servers;
  const searches = fromConfig ? [...(cfg!.searches ?? [])] : fromFile.searches;
  const options = fromConfig ? [...(cfg!.options ?? [])] : fromFile.options;
  const asked = name ? { name, qtype: (name === '.' ? 'NS' : 'A') as DnsQueryResult['qtype'] } : defaultDnsName(searches);
  const out: ProbeDns = { source: fromConfig ? 'dns_config' : 'resolv.conf', servers, searches, options, ...asked };
  if (resolvConf !== undefined) out.resolvConf = resolvConf;
  return out;
}

/** a query to every nameserver, sent from the pod over its attachment that holds an address of the server's family */
export function planDns(rec: PodFacts, dns: ProbeDns, attachments: ProbedAttachment[], plan: ProbePlan): void {
  for (const server of dns.servers) {
    const fam = familyOf(server);
    const att = attachments.find((a) => a.ips.some((ip) => familyOf(ip) === fam)) ?? attachments[0];
    const path = newPath('dns', 'pod', fmtAddr(server, DNS_PORT), 'udp', undefined, 'timeout', '', att);
    path.family = fam;
    path.dns = { server, name: dns.name, qtype: dns.qtype };
    if (!att?.ips.some((ip) => familyOf(ip) === fam)) {
      plan.decided.push({
        ...path,
        verdict: 'unreachable',
        note: `the pod has no IPv${fam} address: nameserver ${server} cannot be asked`,
      });
      continue;
    }
    plan.connects.push({ path, fromAgent: rec.id, host: server, port: DNS_PORT, expect: 'host', existing: false, dns: path.dns });
  }
}

/** what the trace's explanation is told the query did, in the shape of a connect */
export function asConnectOutcome(o: DnsOutcome): ConnectOutcome {
  switch (o.kind) {
    case 'answer':
      return { kind: 'connected', rttMs: o.rttMs };
    case 'refused':
      return { kind: 'refused' };
    case 'timeout':
      return { kind: 'timeout' };
    case 'unreachable':
      return { kind: 'unreachable', error: o.error };
    case 'error':
      return { kind: 'error', error: o.error };
  }
}

export function judgeDns(p: PlannedConnect, o: DnsOutcome, timeoutMs: number, routeNote: (code: string) => string): ProbePath {
  const dns: DnsQueryResult = { ...p.dns! };
  const path: ProbePath = { ...p.path, measured: true, dns };
  const q = `${dns.qtype} ${dns.name}`;
  switch (o.kind) {
    case 'answer': {
      dns.transport = o.transport;
      dns.rcode = o.rcode;
      dns.answers = o.answers;
      if (o.truncated) dns.truncated = true;
      if (o.udpRefused) dns.udpRefused = true;
      path.proto = o.transport;
      path.rttMs = Math.round(o.rttMs * 1000) / 1000;
      const how = o.truncated
        ? 'the UDP answer was truncated; answered over TCP'
        : o.udpRefused
          ? 'UDP was refused (port unreachable); answered over TCP'
          : `over ${o.transport.toUpperCase()}`;
      if (o.rcode === 'REFUSED')
        return { ...path, verdict: 'refused', note: `the server answered REFUSED to ${q}: it will not resolve for this pod (${how})` };
      const what =
        o.rcode === 'NXDOMAIN'
          ? `NXDOMAIN: ${dns.name} does not exist (an answer: the server works)`
          : o.answers.length
            ? `${o.rcode}: ${o.answers.slice(0, 4).join(', ')}${o.answers.length > 4 ? ` and ${o.answers.length - 4} more` : ''}`
            : `${o.rcode}: no ${dns.qtype} record for ${dns.name}`;
      return { ...path, verdict: 'reachable', note: `${what} (${how})` };
    }
    case 'refused':
      return {
        ...path,
        verdict: 'refused',
        note: o.tcpTimeout
          ? 'UDP port 53 unreachable (ICMP) and no answer over TCP: no DNS server there'
          : 'nothing listens on port 53: UDP port unreachable and TCP refused',
      };
    case 'timeout':
      return {
        ...path,
        verdict: 'timeout',
        note: o.truncated
          ? `the UDP answer was truncated and TCP got no answer in ${timeoutMs} ms`
          : `no answer to ${q} in ${timeoutMs} ms`,
      };
    case 'unreachable':
      return { ...path, verdict: 'unreachable', note: routeNote(o.error) };
    case 'error':
      return { ...path, verdict: 'timeout', note: `not asked: ${o.error}` };
  }
}
