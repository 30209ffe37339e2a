/**
 * Finds every CRI runtime on this machine and the node around it. Two ways in: the well-known sockets (containerd,
 * CRI-O, k3s's containerd, a Podscope daemon), and the runtime processes themselves — each one's listening unix
 * sockets (its fds' socket inodes matched against its netns's /proc/<pid>/net/unix), which finds a runtime in
 * another mount namespace (a kind node's containerd) whose socket the host only reaches through /proc/<pid>/root.
 * Every candidate must answer CRI Version to be a node. Then, per node: its namespaces (told apart from the host's),
 * its name (the hostname of its UTS namespace), its addresses and routes (read inside its netns) and its pod subnets
 * (host-local ranges of its CNI config, read through its root; connected routes on its CNI bridges). Read-only: it
 * opens files and sockets, asks Version, and runs `ip` inside the node's netns to list.
 */
import { createHash } from 'node:crypto';
import type { NodeAddress, NodeDiscovery, NodeNamespace, NodePodSubnet, NodeRoute, NodeView } from '../../../shared/domain/nodes';
import type { IpRoute, NsKind, ProcSource } from './proc-source';

export interface RuntimeVersion {
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

export interface DiscoveryDeps {
  proc: ProcSource;
  /** CRI Version of the socket; rejects when it does not answer as a CRI runtime */
  version(endpoint: string): Promise<RuntimeVersion>;
}

/** The sockets runtimes listen on by default (as each one's docs and packages set them). */
export const WELL_KNOWN_SOCKETS: readonly string[] = [
  '/run/containerd/containerd.sock',
  '/run/crio/crio.sock',
  '/run/k3s/containerd/containerd.sock',
  // the `podscope cri` daemon's default
  '/run/podscope/podscope.sock',
];

/** process names of CRI runtimes; a Podscope daemon is a node process, recognised by its command line */
const RUNTIME_COMMS = new Set(['containerd', 'crio', 'k3s', 'k3s-server', 'k3s-agent']);
const DEFAULT_CNI_CONF_DIR = '/etc/cni/net.d';

interface Candidate {
  socketPath: string;
  endpoint: string;
  pid?: number;
  foundBy: NodeView['foundBy'];
}

function isRuntimeProcess(proc: ProcSource, pid: number): boolean {
  const comm = proc.comm(pid);
  if (comm && RUNTIME_COMMS.has(comm)) return true;
  const argv = proc.cmdline(pid);
  return argv.some((a) => /podscope/.test(a)) && argv.includes('cri');
}

/** a CRI socket rather than a runtime's other listeners (containerd's ttrpc and debug sockets, shims' sockets) */
function looksLikeCriSocket(path: string): boolean {
  return path.startsWith('/') && path.endsWith('.sock') && !/debug/.test(path) && !/\/s\/[0-9a-f]+$/.test(path);
}

/** the pid in its own pid namespace (the last NSpid field), when it has one */
export function nsPidOf(status: string | undefined): number | undefined {
  const m = /^NSpid:\s*(.+)$/m.exec(status ?? '');
  const ids = m ? m[1]!.trim().split(/\s+/).map(Number) : [];
  return ids.length > 1 ? ids[ids.length - 1] : undefined;
}

/** a stable short tag of a string */
const tag = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 6);

function candidates(proc: ProcSource): Candidate[] {
  const hostMnt = proc.ns('self', 'mnt');
  const byKey = new Map<string, Candidate>();
  for (const pid of proc.pids()) {
    if (!isRuntimeProcess(proc, pid)) continue;
    const mnt = proc.ns(pid, 'mnt');
    if (!mnt) continue;
    const inodes = proc.socketInodes(pid);
    for (const l of proc.unixListeners(pid)) {
      if (!inodes.has(l.inode) || !looksLikeCriSocket(l.path)) continue;
      const endpoint = mnt === hostMnt ? l.path : `/proc/${pid}/root${l.path}`;
      byKey.set(`${mnt}|${l.path}`, { socketPath: l.path, endpoint, pid, foundBy: 'process' });
    }
  }
  // a well-known socket whose owner was not seen (not readable, or a runtime under another name) is still tried
  for (const path of WELL_KNOWN_SOCKETS) {
    const key = `${hostMnt}|${path}`;
    const seen = byKey.get(key);
    if (seen) seen.foundBy = 'well-known';
    else if (proc.isSocket(path)) byKey.set(key, { socketPath: path, endpoint: path, foundBy: 'well-known' });
  }
  return [...byKey.values()];
}

function namespaces(proc: ProcSource, pid: number | undefined): NodeView['namespaces'] {
  const one = (kind: NsKind): NodeNamespace => {
    const host = proc.ns('self', kind) ?? '';
    const id = (pid !== undefined && proc.ns(pid, kind)) || host;
    return { id, host: id === host };
  };
  return { net: one('net'), mnt: one('mnt'), pid: one('pid'), uts: one('uts') };
}

interface CniFacts {
  subnets: NodePodSubnet[];
  bridges: Set<string>;
  problems: string[];
}

/** where the runtime reads its CNI config: containerd's conf_dir from its config file, else the usual dir */
function cniConfDir(proc: ProcSource, pid: number | undefined, root: string): string {
  if (pid === undefined) return DEFAULT_CNI_CONF_DIR;
  const argv = proc.cmdline(pid);
  const flag = (names: string[]) => {
    for (const [i, a] of argv.entries()) {
      for (const n of names) {
        if (a === n) return argv[i + 1];
        if (a.startsWith(`${n}=`)) return a.slice(n.length + 1);
      }
    }
    return undefined;
  };
  const direct = flag(['--cni-conf-dir']);
  if (direct) return direct;
  if (proc.comm(pid) === 'containerd') {
    const config = flag(['--config', '-c']) ?? '/etc/containerd/config.toml';
    const m = /^\s*conf_dir\s*=\s*"([^"]+)"/m.exec(proc.readFile(`${root}${config}`) ?? '');
    if (m) return m[1]!;
  }
  return DEFAULT_CNI_CONF_DIR;
}

interface PluginConf {
  type?: string;
  bridge?: string;
  ipam?: { type?: string; subnet?: string; ranges?: Array<Array<{ subnet?: string }>> };
}

function readCni(proc: ProcSource, pid: number | undefined, root: string): CniFacts {
  const dir = cniConfDir(proc, pid, root);
  const facts: CniFacts = { subnets: [], bridges: new Set(), problems: [] };
  const files = proc
    .listDir(`${root}${dir}`)
    .filter((f) => /\.(conflist|conf|json)$/.test(f))
    .sort();
  for (const f of files) {
    let doc: { name?: string; plugins?: PluginConf[] } & PluginConf;
    try {
      doc = JSON.parse(proc.readFile(`${root}${dir}/${f}`) ?? '') as typeof doc;
    } catch (e) {
      facts.problems.push(`CNI config ${dir}/${f}: ${(e as Error).message}`);
      continue;
    }
    const network = doc.name ?? f;
    for (const p of doc.plugins ?? [doc]) {
      if (p.type === 'bridge') facts.bridges.add(p.bridge ?? 'cni0');
      if (p.ipam?.type !== 'host-local') continue;
      const cidrs = [...(p.ipam.ranges ?? []).flat().map((r) => r.subnet), p.ipam.subnet].filter((s): s is string => !!s);
      for (const cidr of cidrs) facts.subnets.push({ cidr, source: 'cni-config', from: network });
    }
  }
  return facts;
}

async function describe(deps: DiscoveryDeps, c: Candidate, v: RuntimeVersion, hostName: string): Promise<NodeView> {
  const { proc } = deps;
  const ns = namespaces(proc, c.pid);
  const problems: string[] = [];
  const root = c.pid !== undefined && !ns.mnt.host ? `/proc/${c.pid}/root` : '';
  let name: string | undefined;
  if (!ns.uts.host && c.pid !== undefined) name = await proc.hostname(c.pid);
  const nameFrom: NodeView['nameFrom'] = name ? 'uts-hostname' : 'derived';
  // in the host's UTS namespace every runtime would share the host's name: the runtime and the socket tell them apart
  name ??= `${hostName}-${v.runtimeName}-${tag(`${ns.mnt.id}|${c.socketPath}`)}`;

  const cni = readCni(proc, c.pid, root);
  problems.push(...cni.problems);
  const netPid = c.pid ?? 'self';
  const [addrs, routes] = await Promise.all([
    proc.addresses(netPid).catch((e: unknown) => {
      problems.push(`addresses: ${(e as Error).message}`);
      return [];
    }),
    proc.routes(netPid).catch((e: unknown): IpRoute[] => {
      problems.push(`routes: ${(e as Error).message}`);
      return [];
    }),
  ]);
  const isPodSide = (dev: string) => cni.bridges.has(dev) || dev.startsWith('veth') || dev === 'lo';
  const addresses: NodeAddress[] = addrs
    .filter((a) => a.scope === 'global' && !isPodSide(a.ifName))
    .map((a) => ({ ifName: a.ifName, cidr: `${a.local}/${a.prefixLen}` }));
  const podSubnets = [...cni.subnets];
  for (const r of routes)
    if (!r.gateway && r.dev && cni.bridges.has(r.dev) && r.dst !== 'default' && !podSubnets.some((s) => s.cidr === r.dst))
      podSubnets.push({ cidr: r.dst, source: 'route', from: r.dev });
  const via: NodeRoute[] = routes.filter((r) => r.gateway && r.dst !== 'default').map((r) => ({ dst: r.dst, via: r.gateway, dev: r.dev }));
  const nsPid = c.pid !== undefined && !ns.pid.host ? nsPidOf(proc.status(c.pid)) : undefined;
  return {
    name,
    nameFrom,
    endpoint: c.endpoint,
    socketPath: c.socketPath,
    foundBy: c.foundBy,
    ...v,
    ...(c.pid !== undefined && { pid: c.pid }),
    ...(nsPid !== undefined && { nsPid }),
    namespaces: ns,
    addresses,
    podSubnets,
    routes: via,
    problems,
  };
}

/** Every node on this machine, sorted by name; candidates that did not answer CRI Version are listed as refused. */
export async function discoverNodes(deps: DiscoveryDeps): Promise<NodeDiscovery> {
  const hostName = (await deps.proc.hostname('self')) ?? 'host';
  const found = candidates(deps.proc);
  const answers = await Promise.all(
    found.map(async (c) => {
      try {
        return { c, v: await deps.version(c.endpoint) };
      } catch (e) {
        return { c, error: (e as Error).message };
      }
    }),
  );
  const nodes = await Promise.all(answers.filter((a) => a.v).map((a) => describe(deps, a.c, a.v!, hostName)));
  const refused = answers
    .filter((a) => a.error !== undefined)
    .map((a) => ({ endpoint: a.c.endpoint, ...(a.c.pid !== undefined && { pid: a.c.pid }), reason: a.error! }));
  nodes.sort((a, b) => a.name.localeCompare(b.name) || a.endpoint.localeCompare(b.endpoint));
  return { nodes, refused };
}
