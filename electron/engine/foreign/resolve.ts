/**
 * A pod another CRI runtime made (containerd, CRI-O) resolved to the PodFacts every measuring feature reads, from
 * what the node itself holds — never by asking the runtime to do anything but describe the pod:
 * - the netns: the network namespace path in the pause's OCI spec (verbose info `runtimeSpec.linux.namespaces`,
 *   which both containerd and CRI-O send), else go-cni's `Sandbox` of eth0 (containerd's `cniResult`); when that
 *   path is not visible from this mount namespace, the pause process's own `/proc/<pid>/ns/net`;
 * - the attachments: libcni's result cache (`<cacheDir>/results/<network>-<sandbox id>-<ifname>`, what both runtimes'
 *   libcni writes after an ADD: the conflist that ran, the CNI_ARGS, the capability args, the final result);
 * - the per-interface view: containerd's `cniResult` when it sent one, else folded from the cached results the way
 *   go-cni folds them (CRI-O's verbose info carries no CNI result at all).
 * A fact that cannot be found is an error naming the fact and every place looked, so the user can tell a pod Podscope
 * cannot see from one it misread. Everything here only reads.
 */
import { isHostNetwork } from '../../../shared/domain/config';
import { PodscopeError } from '../../../shared/domain/errors';
import { selectForEveryPreference } from '../../../shared/domain/ip-selection';
import type { NetworkAttachment, SandboxStatus } from '../../../shared/domain/sandbox';
import { fromGoCniResult, type GoCniResult } from '../../../shared/domain/verbose-info';
import { createResult } from '../cni/create-result';
import { parseVersionedResult, toV1View } from '../cni/result-convert';
import type { CniSetupResult, PodFacts } from '../common/pod-facts';
import { throughRoot, type ForeignNode, type NodeFiles } from './deps';

/** libcni's cache format marker (cniCacheV1) */
const CACHE_KIND = 'cniCacheV1';

/** One pod as a CRI endpoint describes it: the decoded status and the verbose document it came with. */
export interface ForeignSandbox {
  /** the runtime's name from its Version reply ("containerd", "cri-o") */
  runtimeName: string;
  status: SandboxStatus;
  /** info["info"] parsed as the runtime sent it (undefined: no verbose info) */
  verbose?: unknown;
}

export interface ForeignResolveOptions {
  /** libcni's cache dir of this endpoint's runtime (its results under `<cacheDir>/results`; default /var/lib/cni) */
  cniCacheDir: string;
  /** the runtime's node when it lives in namespaces of its own (a kind node): its root and its pid numbering */
  node?: ForeignNode;
}

/** PodFacts plus where each fact came from (the CLI and the app say it beside the measurement). */
export interface ForeignPodFacts extends PodFacts {
  runtimeName: string;
  /** the pause's pid as the runtime reports it (in its own pid namespace, for a node with one) */
  pausePid?: number;
  /** the pause's pid in this process's pid namespace, when it differs */
  pauseHostPid?: number;
  /** the pause's pid as /proc here numbers it, when known (its root there holds the pod's /etc/resolv.conf) */
  pauseProcPid?: number;
  /** where the netns and the attachments were found, in words */
  resolvedFrom: { netns?: string; attachments?: string };
}

/**
 * The pod's resolv.conf as its containers see it, read through the pause process's root (`/proc/<pid>/root`):
 * containerd mounts the file it wrote for the sandbox (from dns_config, else a copy of its host's) into the pause
 * container at /etc/resolv.conf, so this is the file whatever the runtime's directories are and whichever mount
 * namespace it lives in. Read-only; undefined when the pause is not seen here or the file cannot be read.
 */
export async function foreignResolvConf(files: NodeFiles, pod: Pick<ForeignPodFacts, 'pauseProcPid'>): Promise<string | undefined> {
  return pod.pauseProcPid === undefined ? undefined : files.readText(`/proc/${pod.pauseProcPid}/root/etc/resolv.conf`);
}

/** The verbose facts both runtimes' documents share, read defensively: a missing or odd field is just absent. */
interface VerboseFacts {
  pid?: number;
  /** the network namespace path in the pause's OCI spec */
  specNetns?: string;
  /** the spec has no network namespace entry: the pod shares the host's */
  specHostNetwork: boolean;
  cniResult?: GoCniResult;
  netnsClosed?: boolean;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

export function verboseFacts(doc: unknown): VerboseFacts {
  const out: VerboseFacts = { specHostNetwork: false };
  if (!isObject(doc)) return out;
  if (typeof doc.pid === 'number' && doc.pid > 0) out.pid = doc.pid;
  if (typeof doc.netNamespaceClosed === 'boolean') out.netnsClosed = doc.netNamespaceClosed;
  if (isObject(doc.cniResult)) out.cniResult = doc.cniResult as GoCniResult;
  const linux = isObject(doc.runtimeSpec) && isObject(doc.runtimeSpec.linux) ? doc.runtimeSpec.linux : undefined;
  if (linux && Array.isArray(linux.namespaces)) {
    const net = linux.namespaces.find((n) => isObject(n) && n.type === 'network') as { path?: unknown } | undefined;
    if (!net) out.specHostNetwork = true;
    else if (typeof net.path === 'string' && net.path !== '') out.specNetns = net.path;
  }
  return out;
}

/** Resolves one foreign pod, or throws FailedPrecondition naming the fact that could not be found and where. */
export async function resolveForeignPod(files: NodeFiles, pod: ForeignSandbox, opts: ForeignResolveOptions): Promise<ForeignPodFacts> {
  const s = pod.status;
  const v = verboseFacts(pod.verbose);
  const facts: ForeignPodFacts = {
    id: s.id,
    name: s.name,
    config: s.config,
    runtimeHandler: s.runtimeHandler,
    createdAtNs: s.createdAtNs,
    state: s.internalState,
    ip: s.ip,
    additionalIps: s.additionalIps,
    runtimeName: pod.runtimeName,
    resolvedFrom: {},
    ...(v.pid !== undefined && { pausePid: v.pid }),
  };
  if (isHostNetwork(s.config) || v.specHostNetwork) return facts;
  const who = `sandbox ${s.id} (${pod.runtimeName})`;
  if (s.internalState !== 'Ready' || v.netnsClosed === true) {
    // a stopped pod's namespace and attachments are gone: the features refuse it as not ready, as for our own
    facts.netnsClosed = true;
    return facts;
  }

  // the netns
  const tried: string[] = [];
  const candidates: Array<[string, string]> = [];
  if (v.specNetns) candidates.push([v.specNetns, "the network namespace path in the pause's OCI spec (verbose info runtimeSpec)"]);
  const sandboxOfEth0 = v.cniResult?.Interfaces?.eth0?.Sandbox;
  if (sandboxOfEth0 && sandboxOfEth0 !== v.specNetns) candidates.push([sandboxOfEth0, "eth0's Sandbox in the verbose cniResult"]);
  const node = opts.node;
  if (node?.root !== undefined)
    // a node with a mount namespace of its own: the paths it wrote are its own, reached through its root (the same
    // path here names this host's file, if any)
    candidates.splice(
      0,
      candidates.length,
      ...candidates.map(([path, what]): [string, string] => [throughRoot(node.root, path), `${what}, through the node's root`]),
    );
  if (v.pid !== undefined) {
    // a runtime in its own pid namespace numbers the pause its own way: /proc/<that number> here is another process
    const hostPid = node?.hostPid ? node.hostPid(v.pid) : v.pid;
    if (hostPid !== undefined && hostPid !== v.pid) facts.pauseHostPid = hostPid;
    if (hostPid !== undefined) facts.pauseProcPid = hostPid;
    if (hostPid !== undefined)
      candidates.push([
        `/proc/${hostPid}/ns/net`,
        `the pause process's own namespace (pid ${v.pid}${hostPid !== v.pid ? `, ${hostPid} here` : ''})`,
      ]);
    else tried.push(`the pause pid ${v.pid}: no process of this node's pid namespace carries it`);
  }
  for (const [path, what] of candidates) {
    if (await files.exists(path)) {
      facts.netnsPath = path;
      facts.resolvedFrom.netns = `${path}: ${what}`;
      break;
    }
    tried.push(`${path} (${what}): not visible from here`);
  }
  if (!facts.netnsPath) {
    if (v.pid === undefined) tried.push('the pause pid: the verbose info carries none');
    if (pod.verbose === undefined) tried.push('verbose PodSandboxStatus: the runtime sent no verbose info');
    throw new PodscopeError('FailedPrecondition', `${who}: cannot find its network namespace; looked at ${tried.join('; ')}`, {
      details: { fact: 'netns', looked: tried },
    });
  }

  // the attachments
  const resultsDir = throughRoot(node?.root, `${opts.cniCacheDir.replace(/\/+$/, '')}/results`);
  const networks = await cachedAttachments(files, resultsDir, s.id);
  if (networks.length === 0) {
    const names = await files.readDir(resultsDir);
    const where =
      names === undefined
        ? `${resultsDir} cannot be read (missing, or not readable from here; set the endpoint's CNI cache dir if its runtime keeps it elsewhere)`
        : `${resultsDir} has no <network>-${s.id}-<ifname> entry`;
    const verbose = v.cniResult
      ? `the verbose cniResult names interfaces (${Object.keys(v.cniResult.Interfaces ?? {}).join(', ') || 'none'}) but not their networks`
      : 'the verbose info carries no CNI result';
    throw new PodscopeError('FailedPrecondition', `${who}: cannot find its CNI attachments; looked at ${where}; ${verbose}`, {
      details: { fact: 'attachments', looked: [resultsDir, 'verbose cniResult'] },
    });
  }
  facts.resolvedFrom.attachments = `${resultsDir} (libcni's cache: ${networks.map((n) => `${n.network}/${n.ifName}`).join(', ')})`;
  facts.network = setupResult(networks, v.cniResult);
  const eth0Ips = (facts.network.interfaces.eth0?.ipConfigs ?? []).map((c) => c.ip);
  if (eth0Ips.length) {
    // the runtime's primary says which preference it used (containerd: IPv4 first; CRI-O: the same)
    const alternatives = selectForEveryPreference(eth0Ips);
    const chosen = Object.values(alternatives).find((a) => a.primary === s.ip) ?? alternatives.ipv4;
    facts.ipSelection = { ...chosen, eth0Ips };
    if (!facts.ip) {
      facts.ip = chosen.primary;
      facts.additionalIps = chosen.additional;
    }
  }
  return facts;
}

/** libcni GetCachedAttachments: the cache entries whose name and content both name this sandbox. */
async function cachedAttachments(files: NodeFiles, resultsDir: string, id: string): Promise<NetworkAttachment[]> {
  const names = ((await files.readDir(resultsDir)) ?? []).filter((n) => n.includes(`-${id}-`) && !n.includes('.tmp-')).sort();
  const out: NetworkAttachment[] = [];
  for (const name of names) {
    const file = `${resultsDir}/${name}`;
    const text = await files.readText(file);
    if (text === undefined) continue;
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      continue; // unreadable entries are skipped, as libcni skips them
    }
    if (!isObject(doc) || doc.kind !== CACHE_KIND || doc.containerId !== id) continue;
    if (typeof doc.networkName !== 'string' || typeof doc.ifName !== 'string') continue;
    let result: NetworkAttachment['result'];
    let cniVersion = '';
    try {
      const parsed = parseVersionedResult(doc.result);
      cniVersion = parsed.version;
      result = toV1View(parsed);
    } catch {
      // a cache entry without a usable result still names the network and carries the conflist that ran
    }
    if (!cniVersion) cniVersion = configVersion(doc.config);
    out.push({
      network: doc.networkName,
      ifName: doc.ifName,
      cniVersion,
      ...(result && { result }),
      capabilityArgs: isObject(doc.capabilityArgs) ? doc.capabilityArgs : {},
      cniArgs: Array.isArray(doc.cniArgs) ? (doc.cniArgs.filter((a) => Array.isArray(a) && a.length === 2) as Array<[string, string]>) : [],
      cacheFile: file,
      source: 'cache',
    });
  }
  return out;
}

/** the conflist's own cniVersion from the cache's base64 config bytes ("" when unreadable) */
function configVersion(config: unknown): string {
  if (typeof config !== 'string') return '';
  try {
    const list = JSON.parse(Buffer.from(config, 'base64').toString('utf8')) as { cniVersion?: unknown };
    return typeof list.cniVersion === 'string' ? list.cniVersion : '';
  } catch {
    return '';
  }
}

function setupResult(networks: NetworkAttachment[], goCni: GoCniResult | undefined): CniSetupResult {
  if (goCni && Object.keys(goCni.Interfaces ?? {}).length > 0) return { networks, ...fromGoCniResult(goCni) };
  // no per-interface view from the runtime: fold the cached results as go-cni would (eth0 first)
  const ordered = [...networks].sort((a, b) => ifOrder(a.ifName) - ifOrder(b.ifName));
  return { networks, ...createResult(ordered.flatMap((n) => (n.result ? [n.result] : []))) };
}

const ifOrder = (name: string) => (name === 'eth0' ? -1 : Number(/(\d+)$/.exec(name)?.[1] ?? 1e6));
