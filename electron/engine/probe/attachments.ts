/**
 * The pod's attachments as the probe measures them, one per network it was attached to (eth0, eth1, …): the
 * interface's addresses and gateways, the plugin chain it was made with, and what the kernel says about the interface.
 * The chain comes from the CNI cache entry of the attachment (the conflist bytes the ADD ran with), else from the
 * network loaded from the conf dir under that name, so an edited or removed conflist does not change what the pod is.
 */
import { readFile } from 'node:fs/promises';
import type { PodFacts } from '../common/pod-facts';
import type { ProbeDeps } from './deps';
import type { InterfaceLink, ProbeNet } from '../netns/probe-net';

export type PluginConf = Record<string, unknown> & { type: string };

export interface ProbedAttachment {
  network: string;
  ifName: string;
  /** the chain as the attachment was made (empty when neither the cache nor the conf dir has it) */
  plugins: PluginConf[];
  /** the interface's addresses, in CNI order */
  ips: string[];
  gateways: string[];
  /** the kernel's facts about the interface (undefined when they could not be read) */
  link?: InterfaceLink;
}

/** every attachment but loopback, eth0 first (the order the runtime attached them in) */
export async function attachmentsOf(
  ctx: Pick<ProbeDeps, 'cniConfig'>,
  net: ProbeNet,
  rec: PodFacts,
  errors: string[],
  signal?: AbortSignal,
): Promise<ProbedAttachment[]> {
  const out: ProbedAttachment[] = [];
  for (const a of rec.network?.networks ?? []) {
    if (a.ifName === 'lo' || a.ifName === '') continue;
    const att: ProbedAttachment = {
      network: a.network,
      ifName: a.ifName,
      plugins: await chainOf(ctx, a.network, a.ifName, a.cacheFile),
      ips: ipsOn(rec, a.network),
      gateways: (rec.network?.interfaces[a.ifName]?.ipConfigs ?? []).flatMap((c) => (c.gateway ? [c.gateway] : [])),
    };
    // a veth's design forbids nothing the probe measures: only a chain that does not start with one is read back
    const main = att.plugins[0]?.type;
    if (net.interfaceLink && rec.netnsPath && main !== 'bridge' && main !== 'ptp') {
      try {
        att.link = await net.interfaceLink(rec.netnsPath, a.ifName, signal);
      } catch (e) {
        errors.push(`reading ${a.ifName}'s link (${a.network}): ${(e as Error).message}; its isolation rules go by the plugin chain alone`);
      }
    }
    out.push(att);
  }
  return out.sort((x, y) => ifOrder(x.ifName) - ifOrder(y.ifName));
}

const ifOrder = (name: string) => (name === 'eth0' ? -1 : Number(/(\d+)$/.exec(name)?.[1] ?? 1e6));

/** the pod's addresses on `network` (eth0's in the order its IP selection recorded them) */
export function ipsOn(rec: PodFacts, network: string): string[] {
  const a = rec.network?.networks.find((n) => n.network === network && n.ifName !== 'lo');
  if (!a) return [];
  if (a.ifName === 'eth0') return eth0Ips(rec);
  return (rec.network?.interfaces[a.ifName]?.ipConfigs ?? []).map((c) => c.ip);
}

/** eth0's addresses in CNI order (the IP selection's record of them, or the selected IPs for older records) */
export function eth0Ips(rec: PodFacts): string[] {
  return rec.ipSelection?.eth0Ips ?? [rec.ip, ...rec.additionalIps].filter(Boolean);
}

export function onNetwork(rec: PodFacts, network: string): boolean {
  return rec.network?.networks.some((n) => n.network === network && n.ifName !== 'lo') ?? false;
}

async function chainOf(
  ctx: Pick<ProbeDeps, 'cniConfig'>,
  network: string,
  ifName: string,
  cacheFile: string | undefined,
): Promise<PluginConf[]> {
  if (cacheFile) {
    try {
      const doc = JSON.parse(await readFile(cacheFile, 'utf8')) as { config?: string };
      const list = JSON.parse(Buffer.from(doc.config ?? '', 'base64').toString('utf8')) as { plugins?: unknown };
      if (Array.isArray(list.plugins)) return list.plugins.filter(isPluginConf);
    } catch {
      // gone or unreadable: the conf dir's copy below
    }
  }
  const loaded = ctx.cniConfig().networks.find((n) => n.name === network && n.ifName === ifName);
  return loaded?.plugins.map((p) => ({ ...p.raw, type: p.type })) ?? [];
}

const isPluginConf = (p: unknown): p is PluginConf =>
  typeof p === 'object' && p !== null && typeof (p as { type?: unknown }).type === 'string';
