/**
 * What firewall, tuning, sbr and host-device did to a pod, read from the kernel in the live view's one read: which
 * plugins ran comes from the sandbox's recorded ADD calls (their stdin is each plugin's config, the attachment's
 * result its addresses); what they did comes from the kernel. Whatever the kernel cannot say (firewalld's zone, a
 * host link's name before it was moved) is marked as derived from the config (docs/semantics.md#plugin-effects).
 */
import { EFFECT_PLUGINS, type LivePluginEffect } from '../../../shared/domain/live';
import type { TraceEntry } from '../../../shared/domain/trace';
import type { CniResult } from '../../../shared/domain/cni';
import { ruleLine } from '../kernel/lines';
import type { LiveExtraQuery, RawLiveNetwork } from '../netns/live-reader';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** one plugin's ADD for one attachment, as the sandbox recorded it */
export interface EffectCall {
  network: string;
  ifName: string;
  type: string;
  index: number;
  conf: Obj;
  /** the attachment's addresses (no prefix length) */
  ips: string[];
}

/** the last successful ADD of each effect plugin per attachment, in the order they ran */
export function effectCalls(trace: TraceEntry[], networks: Array<{ network: string; ifName: string; result?: CniResult }>): EffectCall[] {
  const byKey = new Map<string, EffectCall>();
  for (const t of trace) {
    const p = t.plugin;
    if (t.phase !== 'run' || t.step !== 'cni.plugin' || !p || p.verb !== 'ADD' || p.exitCode !== 0) continue;
    if (!(EFFECT_PLUGINS as readonly string[]).includes(p.type)) continue;
    let conf: unknown;
    try {
      conf = JSON.parse(p.stdin);
    } catch {
      continue;
    }
    const att = networks.find((n) => n.network === p.network && n.ifName === p.ifName);
    const ips = (att?.result?.ips ?? []).map((i) => i.address.split('/')[0]!).filter(Boolean);
    byKey.set(`${p.network}/${p.ifName}#${p.index}`, {
      network: p.network,
      ifName: p.ifName,
      type: p.type,
      index: p.index,
      conf: isObj(conf) ? conf : {},
      ips,
    });
  }
  return [...byKey.values()];
}

/** what the live read must add for these calls: sbr's rules and tables, tuning's sysctls, firewall's filter table */
export function effectQuery(calls: EffectCall[]): LiveExtraQuery {
  const sysctls = calls.flatMap((c) => (c.type === 'tuning' && isObj(c.conf.sysctl) ? Object.keys(c.conf.sysctl) : []));
  return {
    ...(calls.some((c) => c.type === 'sbr') ? { rules: true } : {}),
    ...(sysctls.length ? { sysctls: [...new Set(sysctls)] } : {}),
    ...(calls.some((c) => c.type === 'firewall') ? { filter: true } : {}),
  };
}

/** an address as a whole word of a rule: 10.80.0.5 but not 10.80.0.50 */
const namesAddress = (line: string, ip: string) => new RegExp(`(^|[^0-9A-Za-z:.])${ip.replace(/[.]/g, '\\.')}(?![0-9A-Za-z:.])`).test(line);

function firewall(c: EffectCall, raw: RawLiveNetwork): LivePluginEffect[] {
  const base = { plugin: c.type, network: c.network, ifName: c.ifName };
  if (c.conf.backend === 'firewalld') {
    const zone = typeof c.conf.firewalldZone === 'string' && c.conf.firewalldZone ? c.conf.firewalldZone : 'trusted';
    return [
      {
        ...base,
        kind: 'iptables-rule',
        source: 'config',
        what: `firewalld zone ${zone}: ${c.ips.join(', ')} added as sources`,
        note: 'firewalld backend: Podscope reads iptables, not firewalld, so this is what the config says',
      },
    ];
  }
  const admin =
    typeof c.conf.iptablesAdminChainName === 'string' && c.conf.iptablesAdminChainName ? c.conf.iptablesAdminChainName : 'CNI-ADMIN';
  const chains = new Set(['CNI-FORWARD', admin]);
  const lines = [...(raw.filter?.v4 ?? []).map((l) => ['iptables', l]), ...(raw.filter?.v6 ?? []).map((l) => ['ip6tables', l])];
  const found = lines.filter(([, l]) => chains.has(/^-A (\S+) /.exec(l!)?.[1] ?? '') && c.ips.some((ip) => namesAddress(l!, ip)));
  if (found.length === 0)
    return [
      {
        ...base,
        kind: 'iptables-rule',
        source: 'kernel',
        what: `no rule in CNI-FORWARD or ${admin} names ${c.ips.join(', ') || 'the pod'}`,
        matches: false,
        note: 'firewall adds accept rules for the pod address to CNI-FORWARD on ADD',
      },
    ];
  return found.map(([tool, l]) => ({ ...base, kind: 'iptables-rule', source: 'kernel', what: `${tool} filter ${l}`, matches: true }));
}

function tuning(c: EffectCall, raw: RawLiveNetwork): LivePluginEffect[] {
  const base = { plugin: c.type, network: c.network, ifName: c.ifName };
  const out: LivePluginEffect[] = [];
  for (const [name, asked] of Object.entries(isObj(c.conf.sysctl) ? c.conf.sysctl : {})) {
    const value = raw.sysctls?.[name];
    out.push({
      ...base,
      kind: 'sysctl',
      source: 'kernel',
      what: `${name} = ${value ?? '(not readable)'}`,
      matches: value !== undefined && value.trim() === String(asked).trim(),
      ...(value !== undefined && value.trim() !== String(asked).trim() ? { note: `the config asks for ${String(asked)}` } : {}),
    });
  }
  const link = raw.interfaces.find((i) => i.name === c.ifName);
  if (typeof c.conf.mac === 'string') {
    const ok = link?.mac?.toLowerCase() === c.conf.mac.toLowerCase();
    out.push({
      ...base,
      kind: 'link',
      source: 'kernel',
      what: `${c.ifName} mac ${link?.mac ?? '(no such interface)'}`,
      matches: ok,
      ...(ok ? {} : { note: `the config asks for ${c.conf.mac}` }),
    });
  }
  if (typeof c.conf.mtu === 'number') {
    const ok = link?.mtu === c.conf.mtu;
    out.push({
      ...base,
      kind: 'link',
      source: 'kernel',
      what: `${c.ifName} mtu ${link?.mtu ?? '(no such interface)'}`,
      matches: ok,
      ...(ok ? {} : { note: `the config asks for ${c.conf.mtu}` }),
    });
  }
  for (const flag of ['promisc', 'allmulti'] as const)
    if (typeof c.conf[flag] === 'boolean')
      out.push({
        ...base,
        kind: 'link',
        source: 'config',
        what: `${c.ifName} ${flag} ${c.conf[flag] ? 'on' : 'off'}`,
        note: 'from the config: the live view does not read link flags',
      });
  return out;
}

function sbr(c: EffectCall, raw: RawLiveNetwork): LivePluginEffect[] {
  const base = { plugin: c.type, network: c.network, ifName: c.ifName };
  const rules = (raw.rules ?? []).filter((r) => c.ips.some((ip) => r.from === ip || r.from === `${ip}/32` || r.from === `${ip}/128`));
  if (rules.length === 0)
    return [
      {
        ...base,
        kind: 'policy-rule',
        source: 'kernel',
        what: `no policy rule from ${c.ips.join(', ') || 'the pod address'}`,
        matches: false,
        note: 'sbr adds a rule per address of its interface, looking up a table of its own',
      },
    ];
  const out: LivePluginEffect[] = [];
  for (const r of rules) {
    out.push({ ...base, kind: 'policy-rule', source: 'kernel', what: ruleLine(r), matches: true });
    for (const rt of (raw.tableRoutes ?? []).filter((x) => x.table === r.table && x.family === r.family))
      out.push({
        ...base,
        kind: 'route',
        source: 'kernel',
        what: `ipv${rt.family} ${rt.dst}${rt.gateway ? ` via ${rt.gateway}` : ''}${rt.dev ? ` dev ${rt.dev}` : ''} table ${rt.table}`,
      });
  }
  return out;
}

function hostDevice(c: EffectCall, raw: RawLiveNetwork): LivePluginEffect[] {
  const base = { plugin: c.type, network: c.network, ifName: c.ifName };
  const named = (['device', 'hwaddr', 'kernelpath', 'pciBusID'] as const).find((k) => typeof c.conf[k] === 'string' && c.conf[k]);
  const origin = named ? `${named === 'device' ? 'host link' : named} ${String(c.conf[named])}` : 'a host link';
  const link = raw.interfaces.find((i) => i.name === c.ifName);
  return [
    link
      ? {
          ...base,
          kind: 'link',
          source: 'kernel',
          what: `${c.ifName} (${link.kind ?? 'device'}) mac ${link.mac ?? '?'} mtu ${link.mtu ?? '?'} state ${link.state ?? '?'}: ${origin}, moved into the pod`,
          note: 'the host name comes from the config: inside the pod the kernel knows it only as its interface name',
        }
      : {
          ...base,
          kind: 'link',
          source: 'kernel',
          what: `${c.ifName}: not in the pod's netns (${origin} was to be moved in)`,
          matches: false,
        },
  ];
}

export function pluginEffects(calls: EffectCall[], raw: RawLiveNetwork): LivePluginEffect[] {
  return calls.flatMap((c) => {
    switch (c.type) {
      case 'firewall':
        return firewall(c, raw);
      case 'tuning':
        return tuning(c, raw);
      case 'sbr':
        return sbr(c, raw);
      case 'host-device':
        return hostDevice(c, raw);
      default:
        return [];
    }
  });
}
