/**
 * What a run changed in place, from the watched values of two snapshots (kernel.ts): sysctls of the host and of the
 * run's netns, and the host links the conflist names or a plugin moved into the run's netns (host-device). A link is
 * followed by name, then by MAC (a link moved back under another name, or living in the netns as the pod's ifname).
 * A new interface's sysctls are compared with the netns's `default` ones, the values it was created with, so only
 * what a plugin set shows (docs/semantics.md#lab-changed-state).
 */
import type { LabKernelChange } from '../../../shared/domain/lab';
import type { KernelWatch, WatchedLink, WatchedState } from './kernel';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** which plugin touches what, from the conflist's plugin objects */
export interface ChangeOwners {
  /** host link name → plugin types that name it */
  hostLinks: Record<string, string[]>;
  /** sysctl name → plugin types that set it */
  sysctls: Record<string, string[]>;
  /** plugin types in the list */
  types: string[];
}

const push = (m: Record<string, string[]>, k: string, v: string) => {
  if (!(m[k] ?? []).includes(v)) m[k] = [...(m[k] ?? []), v];
};

/** the host links and sysctls a conflist names: host-device's device, macvlan/ipvlan's master, bridges, tuning's map */
export function changeOwners(plugins: Obj[], defaultBridge: string): ChangeOwners {
  const owners: ChangeOwners = { hostLinks: {}, sysctls: {}, types: [] };
  for (const p of plugins) {
    const type = typeof p.type === 'string' ? p.type : '';
    if (!owners.types.includes(type)) owners.types.push(type);
    if (type === 'host-device' && typeof p.device === 'string' && p.device) push(owners.hostLinks, p.device, type);
    if ((type === 'macvlan' || type === 'ipvlan') && typeof p.master === 'string' && p.master) push(owners.hostLinks, p.master, type);
    if (type === 'bridge') push(owners.hostLinks, typeof p.bridge === 'string' && p.bridge ? p.bridge : defaultBridge, type);
    if (type === 'tuning' && isObj(p.sysctl)) for (const name of Object.keys(p.sysctl)) push(owners.sysctls, name, type);
  }
  return owners;
}

/** the conflist's names, and for each per-interface sysctl its `default`: the value a new interface starts from */
export function kernelWatch(owners: ChangeOwners): KernelWatch {
  const named = Object.keys(owners.sysctls);
  const defaults = named.map(defaultOf).filter((n): n is string => n !== undefined);
  return { hostLinks: Object.keys(owners.hostLinks), sysctls: [...new Set([...named, ...defaults])] };
}

/** plugins that turn on forwarding in the host's netns for the gateway they route through, and leave it on */
const FORWARDING_PLUGINS = ['bridge', 'ptp'];
const FORWARDING = /^net\.ipv[46]\.(ip_forward|conf\.all\.forwarding)$/;

function sysctlOwner(name: string, where: 'host' | 'netns', owners: ChangeOwners): string | undefined {
  const named = owners.sysctls[name];
  if (named && where === 'netns') return named.join(', ');
  const iface = interfaceOf(name);
  if (where === 'host' && iface !== undefined && owners.hostLinks[iface]) return owners.hostLinks[iface].join(', ');
  if (FORWARDING.test(name)) {
    const p = owners.types.filter((t) => FORWARDING_PLUGINS.includes(t));
    if (p.length) return p.join(', ');
  }
  return undefined;
}

/** `net.ipv4.conf.eth0.rp_filter` → `net.ipv4.conf.default.rp_filter`; undefined for a name of no interface */
export function defaultOf(name: string): string | undefined {
  const m = /^(net\.ipv[46]\.(?:conf|neigh)\.)([^.]+)(\..+)$/.exec(name);
  if (!m || m[2] === 'default' || m[2] === 'all') return undefined;
  return `${m[1]}default${m[3]}`;
}

function interfaceOf(name: string): string | undefined {
  const m = /^net\.ipv[46]\.(?:conf|neigh)\.([^.]+)\./.exec(name);
  const iface = m?.[1];
  return iface && iface !== 'default' && iface !== 'all' ? iface.replace(/\//g, '.') : undefined;
}

function sysctlChanges(
  a: Record<string, string>,
  b: Record<string, string>,
  where: 'host' | 'netns',
  owners: ChangeOwners,
  aLinks: Set<string>,
): LabKernelChange[] {
  const out: LabKernelChange[] = [];
  const label = where === 'host' ? 'host sysctl' : 'sysctl';
  for (const name of Object.keys(b).sort()) {
    const after = b[name];
    let before = a[name];
    let beforeFrom: string | undefined;
    if (before === undefined) {
      // an interface the earlier snapshot did not have starts from the netns's defaults
      const iface = interfaceOf(name);
      const dflt = defaultOf(name);
      if (iface === undefined || aLinks.has(iface) || dflt === undefined || a[dflt] === undefined) continue;
      before = a[dflt];
      beforeFrom = dflt;
    }
    if (before === after) continue;
    const owner = sysctlOwner(name, where, owners);
    const change: LabKernelChange = {
      where,
      kind: 'sysctl',
      subject: name,
      field: 'value',
      before,
      after,
      text: `${label} ${name} ${before}${beforeFrom ? ' (default)' : ''} → ${after}`,
    };
    if (beforeFrom) change.beforeFrom = beforeFrom;
    if (owner) change.owner = owner;
    out.push(change);
  }
  return out;
}

/** the same link in another snapshot: by name (and kind), else by MAC on the host, else by MAC in the run's netns */
function follow(link: WatchedLink, s: WatchedState): { link: WatchedLink; where: 'host' | 'netns' } | undefined {
  const byName = s.hostLinks.find((l) => l.name === link.name && (l.mac === link.mac || link.mac === undefined));
  if (byName) return { link: byName, where: 'host' };
  if (link.mac && link.mac !== '00:00:00:00:00:00') {
    const hostMac = s.hostLinks.find((l) => l.mac === link.mac && l.kind === link.kind);
    if (hostMac) return { link: hostMac, where: 'host' };
    const podMac = s.netnsLinks.find((l) => l.mac === link.mac);
    if (podMac) return { link: podMac, where: 'netns' };
  }
  return undefined;
}

/** host links of `before` the conflist names, or that ADD moved into the run's netns */
export function watchedHostLinks(before: WatchedState, afterAdd: WatchedState, owners: ChangeOwners): WatchedLink[] {
  return before.hostLinks.filter((l) => {
    if (owners.hostLinks[l.name]) return true;
    return follow(l, afterAdd)?.where === 'netns';
  });
}

function linkChanges(links: WatchedLink[], b: WatchedState, owners: ChangeOwners): LabKernelChange[] {
  const out: LabKernelChange[] = [];
  for (const link of links) {
    const owner = owners.hostLinks[link.name]?.join(', ') ?? (owners.types.includes('host-device') ? 'host-device' : undefined);
    const add = (field: string, before: string | undefined, after: string | undefined, text: string) => {
      if (before === after) return;
      out.push({
        where: 'host',
        kind: 'link',
        subject: link.name,
        field,
        ...(before !== undefined ? { before } : {}),
        ...(after !== undefined ? { after } : {}),
        ...(owner ? { owner } : {}),
        text: `host link ${link.name}: ${text}`,
      });
    };
    const found = follow(link, b);
    if (!found) {
      add('netns', 'host', undefined, `gone (was ${link.state ?? '?'}): in no namespace the lab can see`);
      continue;
    }
    const l = found.link;
    if (found.where === 'netns') {
      add('netns', 'host', "the run's netns", `moved into the run's netns as ${l.name}`);
      continue;
    }
    add('name', link.name, l.name, `renamed ${link.name} → ${l.name}`);
    add('state', link.state, l.state, `state ${link.state ?? '?'} → ${l.state ?? '?'}`);
    add('up', link.up ? 'up' : 'down', l.up ? 'up' : 'down', `administratively ${link.up ? 'up' : 'down'} → ${l.up ? 'up' : 'down'}`);
    add('mtu', link.mtu?.toString(), l.mtu?.toString(), `mtu ${link.mtu ?? '?'} → ${l.mtu ?? '?'}`);
    add('master', link.master, l.master, `master ${link.master ?? 'none'} → ${l.master ?? 'none'}`);
  }
  return out;
}

/**
 * Changes between two snapshots: `links` are the host links to follow (watchedHostLinks). A host sysctl a
 * forwarding plugin turned on stays on by design (other pods route through it too).
 */
export function kernelChanges(a: WatchedState, b: WatchedState, links: WatchedLink[], owners: ChangeOwners): LabKernelChange[] {
  const hostLinksA = new Set(a.hostLinks.map((l) => l.name));
  const netnsLinksA = new Set(a.netnsLinks.map((l) => l.name));
  const host = sysctlChanges(a.hostSysctls, b.hostSysctls, 'host', owners, hostLinksA).map((c) => {
    if (FORWARDING.test(c.subject) && c.after === '1' && c.owner)
      return { ...c, why: `${c.owner} turns on forwarding for the pods it routes and never turns it off (other pods need it)` };
    const iface = interfaceOf(c.subject);
    if (iface !== undefined && owners.hostLinks[iface]?.includes('bridge'))
      return { ...c, why: 'the bridge plugin keeps its bridge, with the settings it gave it, for other attachments' };
    return c;
  });
  return [...linkChanges(links, b, owners), ...host, ...sysctlChanges(a.netnsSysctls, b.netnsSysctls, 'netns', owners, netnsLinksA)];
}

/** what ADD changed (before → after ADD) and what DEL did not put back (before → after DEL) */
export function runChanges(
  before: WatchedState | undefined,
  afterAdd: WatchedState | undefined,
  afterDel: WatchedState | undefined,
  owners: ChangeOwners,
): { changedByAdd: LabKernelChange[]; changedAfterDel: LabKernelChange[] } {
  if (!before || !afterAdd || !afterDel) return { changedByAdd: [], changedAfterDel: [] };
  const links = watchedHostLinks(before, afterAdd, owners);
  return { changedByAdd: kernelChanges(before, afterAdd, links, owners), changedAfterDel: kernelChanges(before, afterDel, links, owners) };
}
