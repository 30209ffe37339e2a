/**
 * What a failed unwind, stop or remove left behind, kept in the record (`cleanupPending`) so that the sandbox stays
 * listed (NOTREADY) with the reason and stop/remove retry exactly that. Nothing here touches the host.
 */
import { analyzePortMappings } from '../../../shared/domain/portmap';
import { PodscopeError } from '../../../shared/domain/errors';
import { describePendingEntry } from '../../../shared/domain/sandbox-release';
import type { PendingCleanup, TraceEntry } from '../../../shared/domain/sandbox';
import type { CniRemoveScope, PendingPluginDel, PluginRef } from '../cni/types';
import type { SandboxRecord } from './record';

const key = (network: string, ifName: string) => `${network}/${ifName}`;

/**
 * Per network, the plugins the run's ADD executed (a record with a binary: the process was started, so it may hold
 * something even if it failed). A plugin whose binary was not found, or that the chain never reached, holds nothing.
 */
export function executedOnAdd(trace: TraceEntry[]): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const t of trace) {
    const p = t.plugin;
    if (t.phase !== 'run' || t.step !== 'cni.plugin' || !p || p.verb !== 'ADD' || !p.binary) continue;
    const k = key(p.network, p.ifName);
    out[k] = [...new Set([...(out[k] ?? []), p.index])].sort((a, b) => a - b);
  }
  return out;
}

/** The DEL scope for the record: a retry of what is left, else what an incomplete ADD executed, else everything. */
export function cniScope(rec: SandboxRecord): CniRemoveScope | 'nothing' {
  const left = (rec.cleanupPending ?? []).filter((p) => p.kind === 'cni');
  if (left.length > 0 && left.every((p) => p.index !== undefined && p.index >= 0)) {
    return { only: left.map((p): PluginRef => ({ network: p.network, ifName: p.ifName, index: p.index!, type: p.plugin })) };
  }
  const executed = rec.cniExecutedOnAdd;
  if (executed) return Object.values(executed).some((a) => a.length > 0) ? { executedOnAdd: executed } : 'nothing';
  return {};
}

/** The plugin object a plugin exec of this sandbox received (its stdin), for what it is configured to hold. */
function pluginConf(rec: SandboxRecord, ref: PluginRef): Record<string, unknown> | undefined {
  for (let i = rec.trace.length - 1; i >= 0; i--) {
    const p = rec.trace[i]!.plugin;
    if (!p || p.network !== ref.network || p.ifName !== ref.ifName || p.index !== ref.index) continue;
    try {
      return JSON.parse(p.stdin) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Addresses the network gave: the cached final result, else what this plugin (or the one before it) printed on ADD. */
function addressesOf(rec: SandboxRecord, ref: PluginRef): string[] {
  const final = rec.network?.networks.find((n) => n.network === ref.network && n.ifName === ref.ifName)?.result;
  if (final?.ips?.length) return final.ips.map((ip) => ip.address);
  for (let i = rec.trace.length - 1; i >= 0; i--) {
    const p = rec.trace[i]!.plugin;
    if (!p || p.verb !== 'ADD' || p.network !== ref.network || p.ifName !== ref.ifName || p.index > ref.index || !p.stdout) continue;
    try {
      const out = JSON.parse(p.stdout) as { ips?: Array<{ address?: string }> };
      const ips = (out.ips ?? []).flatMap((ip) => (typeof ip.address === 'string' ? [ip.address] : []));
      if (ips.length > 0) return ips;
    } catch {
      // a failure's output: no result
    }
  }
  return [];
}

/** Best-effort words for what a plugin may still hold; empty when nothing is known. */
export function holdsOf(rec: SandboxRecord, ref: PluginRef): string[] {
  const conf = pluginConf(rec, ref);
  const type = ref.type || (typeof conf?.type === 'string' ? conf.type : '');
  const holds: string[] = [];
  const ipam = conf?.ipam as { type?: string } | undefined;
  if (ipam?.type || type === 'host-local' || type === 'static' || type === 'dhcp') {
    const ips = addressesOf(rec, ref);
    holds.push(
      ips.length > 0
        ? `IPAM reservation ${ips.join(', ')}${ipam?.type ? ` (${ipam.type})` : ''}`
        : `IPAM reservation${ipam?.type ? ` (${ipam.type})` : ''}`,
    );
  }
  if (['bridge', 'ptp', 'macvlan', 'ipvlan', 'vlan', 'host-device'].includes(type))
    holds.push(`interface ${ref.ifName} in the pod netns${type === 'bridge' || type === 'ptp' ? ' and its host-side veth' : ''}`);
  if ((type === 'bridge' || type === 'ptp') && conf?.ipMasq === true)
    holds.push('ipMasq chain in iptables/ip6tables nat (CNI-…, commented with the sandbox id)');
  if (type === 'portmap') {
    const ports = analyzePortMappings(rec.config.port_mappings).flatMap((d) =>
      d.cni ? [`${d.cni.hostPort}/${d.cni.protocol}→${d.cni.containerPort}`] : [],
    );
    if (ports.length > 0) holds.push(`DNAT for host ports ${ports.join(', ')} (CNI-DN-… chain, CNI-HOSTPORT-* rules)`);
  }
  if (type === 'bandwidth') holds.push('tc qdiscs (tbf on the host veth, ifb device for ingress)');
  if (type === 'firewall') {
    const ips = addressesOf(rec, ref);
    holds.push(`CNI-FORWARD accept rules${ips.length > 0 ? ` for ${ips.join(', ')}` : ''} (filter table; they name no network or id)`);
  }
  if (type === 'sbr') holds.push(`source-based policy rules and their routing table in the pod netns (${ref.ifName})`);
  if (type === 'tuning') holds.push(`sysctls and link settings of ${ref.ifName} in the pod netns`);
  if (type === 'host-device') holds.push('a host link moved into the pod netns (given back on DEL)');
  return holds;
}

/** Pending entries for a failed CNI DEL: one per plugin the error names, else one for the whole DEL. */
export function pendingFromCniError(rec: SandboxRecord, error: unknown, now: string): PendingCleanup[] {
  const details = error instanceof PodscopeError && typeof error.details === 'object' ? (error.details as Record<string, unknown>) : {};
  const plugins = Array.isArray(details.pending) ? (details.pending as PendingPluginDel[]) : undefined;
  if (plugins && plugins.length > 0) {
    return plugins.map((p) => {
      const type = p.type || (typeof pluginConf(rec, p)?.type === 'string' ? (pluginConf(rec, p)!.type as string) : '');
      return {
        kind: 'cni',
        network: p.network,
        ifName: p.ifName,
        plugin: type,
        index: p.index,
        holds: holdsOf(rec, { ...p, type }),
        error: p.message,
        since: now,
      };
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  const previous = (rec.cleanupPending ?? []).filter((p) => p.kind === 'cni');
  if (previous.length > 0) return previous.map((p) => ({ ...p, error: message, since: now }));
  const ips = (rec.network?.networks ?? []).flatMap((n) => n.result?.ips?.map((ip) => ip.address) ?? []);
  return [
    {
      kind: 'cni',
      network: '',
      ifName: '',
      plugin: 'CNI DEL',
      holds: ips.length > 0 ? [`addresses ${ips.join(', ')}`] : [],
      error: message,
      since: now,
    },
  ];
}

/** Replaces the entries of one kind (the latest attempt at that step says what is left of it). */
export function setPending(rec: SandboxRecord, kind: PendingCleanup['kind'], entries: PendingCleanup[]): void {
  const rest = (rec.cleanupPending ?? []).filter((p) => p.kind !== kind);
  const next = [...rest, ...entries];
  if (next.length > 0) rec.cleanupPending = next;
  else delete rec.cleanupPending;
}

export function pendingStep(kind: PendingCleanup['kind'], what: string, holds: string[], error: unknown): PendingCleanup {
  return {
    kind,
    network: '',
    ifName: '',
    plugin: what,
    holds,
    error: error instanceof Error ? error.message : String(error),
    since: new Date().toISOString(),
  };
}

/** One line per entry, for error messages, the CLI and the trace. */
export function describePending(list: PendingCleanup[]): string {
  return list.map(describePendingEntry).join(' | ');
}
