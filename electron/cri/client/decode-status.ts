/**
 * A PodSandboxStatusResponse from any CRI runtime ⇒ Podscope's SandboxStatus view.
 *
 * Podscope daemons put the whole view in the verbose `podscope` section (incl. per-plugin trace). For containerd
 * (docs/semantics.md#verbose-info) the view is rebuilt from what it exposes: `config` (snake_case PodSandboxConfig), `runtimeSpec`,
 * `cniResult` (go-cni Result, PascalCase) and process facts. IP selection is recomputed from eth0's IPConfigs with
 * the shared rules, and the preference is inferred from the primary IP the runtime reported; port mappings and
 * bandwidth are re-derived from the config with the shared containerd rules. What a foreign runtime does not
 * expose (trace, per-network raw results) stays empty — capabilities say so, nothing is invented.
 */
import {
  IP_PREFERENCES,
  PodSandboxConfigSchema,
  isHostNetwork,
  type IpPreference,
  type PodSandboxConfig,
} from '../../../shared/domain/config';
import { analyzeBandwidth } from '../../../shared/domain/bandwidth';
import { selectForEveryPreference, type IpSelection } from '../../../shared/domain/ip-selection';
import { analyzePortMappings } from '../../../shared/domain/portmap';
import type { InternalState, SandboxStatus, SandboxSummary } from '../../../shared/domain/sandbox';
import * as pb from '../generated/runtime_v1';
import { configFromProto } from '../convert/config';
import { stateFromProto } from '../convert/sandbox';
import { fromGoCniResult, VERBOSE_INFO_KEY, type SandboxVerboseInfo } from '../verbose-info';
import { PodscopeError } from '../../../shared/domain/errors';
import { decodePeerJson, PodscopeVerboseSectionSchema, SandboxVerboseInfoSchema } from './peer-schemas';

/** containerd's makeSandboxName: <name>_<namespace>_<uid>_<attempt>. */
export function sandboxName(m: pb.PodSandboxMetadata | undefined): string {
  return m ? `${m.name}_${m.namespace}_${m.uid}_${m.attempt}` : '';
}

export function nsToRfc3339(ns: string): string {
  const n = BigInt(ns || '0');
  const ms = Number(n / 1_000_000n);
  // keep the nanoseconds the Date cannot hold: 2024-01-01T00:00:00.123456789Z
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 19)}.${(n % 1_000_000_000n).toString().padStart(9, '0')}Z`;
}

function metadataOf(m: pb.PodSandboxMetadata | undefined) {
  return { name: m?.name ?? '', uid: m?.uid ?? '', namespace: m?.namespace ?? '', attempt: m?.attempt ?? 0 };
}

/** ListPodSandbox item ⇒ summary (the list RPC carries no network facts; they are filled by status when needed). */
export function podSandboxToSummary(p: pb.PodSandbox): SandboxSummary {
  const state = stateFromProto(p.state);
  return {
    id: p.id,
    name: sandboxName(p.metadata),
    metadata: metadataOf(p.metadata),
    state,
    internalState: state === 'SANDBOX_READY' ? 'Ready' : 'NotReady',
    createdAt: nsToRfc3339(p.createdAt),
    createdAtNs: p.createdAt,
    labels: { ...p.labels },
    annotations: { ...p.annotations },
    runtimeHandler: p.runtimeHandler,
    // not in the list message; hostNetwork/ip are known only from PodSandboxStatus
    hostNetwork: false,
    ip: '',
    additionalIps: [],
    hostPorts: [],
    bandwidth: bandwidthOf(p.annotations),
  };
}

function bandwidthOf(annotations: Record<string, string>): { ingress?: string; egress?: string } {
  const a = analyzeBandwidth(annotations);
  const out: { ingress?: string; egress?: string } = {};
  if (a.ingress) out.ingress = a.ingress.raw;
  if (a.egress) out.egress = a.egress.raw;
  return out;
}

/** info["info"] ⇒ the verbose document, checked (peer-schemas.ts); none when the runtime sent no verbose info. */
function parseInfo(info: Record<string, string>, endpoint: string): Partial<SandboxVerboseInfo> | undefined {
  const raw = info[VERBOSE_INFO_KEY];
  if (!raw) return undefined;
  const doc = decodePeerJson(SandboxVerboseInfoSchema, raw, endpoint, 'PodSandboxStatus verbose info');
  // the podscope section gets its own, complete check in decodeSandboxStatus
  return doc as Partial<SandboxVerboseInfo>;
}

/** The runtime's stored config when it gave one, else what the status message itself says (partial). */
function configOf(p: pb.PodSandboxStatus, verbose: Partial<SandboxVerboseInfo> | undefined): PodSandboxConfig {
  if (verbose?.config && typeof verbose.config === 'object') {
    try {
      return PodSandboxConfigSchema.parse(configFromProto(pb.PodSandboxConfig.fromJSON(verbose.config), 'lenient'));
    } catch {
      // fall back below
    }
  }
  const ns = p.linux?.namespaces?.options;
  return PodSandboxConfigSchema.parse({
    metadata: metadataOf(p.metadata),
    labels: { ...p.labels },
    annotations: { ...p.annotations },
    ...(ns && {
      linux: { security_context: { namespace_options: { network: ns.network, pid: ns.pid, ipc: ns.ipc, target_id: ns.targetId } } },
    }),
  });
}

/** Which preference explains the runtime's primary IP (ipv4 first: containerd's default). */
function inferPreference(primary: string, alternatives: Record<IpPreference, IpSelection>): { preference: IpPreference; matched: boolean } {
  for (const p of ['ipv4', 'ipv6', 'cni'] as const satisfies readonly IpPreference[])
    if (alternatives[p].primary === primary) return { preference: p, matched: true };
  return { preference: IP_PREFERENCES[0], matched: false };
}

/**
 * `endpoint` names the peer in errors: a response whose verbose documents do not have the expected shape is an
 * Internal error naming it (peer-schemas.ts), never a crash or a half-built view.
 */
export function decodeSandboxStatus(res: pb.PodSandboxStatusResponse, runtimeName: string, endpoint = 'the CRI endpoint'): SandboxStatus {
  const p = res.status;
  if (!p)
    throw new PodscopeError('Internal', `CRI endpoint ${endpoint}: PodSandboxStatus response has no status`, { details: { endpoint } });
  const verbose = parseInfo(res.info, endpoint);
  const config = configOf(p, verbose);
  const state = stateFromProto(p.state);

  const section = verbose?.podscope as { format?: unknown } | undefined;
  if (section && typeof section === 'object' && section.format === 'podscope.sandbox-status/v1') {
    const { format: _format, ...view } = decodePeerJson(PodscopeVerboseSectionSchema, section, endpoint, 'a Podscope sandbox status');
    return { ...view, config, ...(verbose!.runtimeSpec !== undefined && { ociSpec: verbose!.runtimeSpec }) };
  }

  const hostNetwork = isHostNetwork(config);
  const cni = fromGoCniResult(verbose?.cniResult);
  const ip = p.network?.ip ?? '';
  const additionalIps = (p.network?.additionalIps ?? []).map((a) => a.ip);
  const eth0Ips = (cni.interfaces.eth0?.ipConfigs ?? []).map((c) => c.ip);
  const alternatives = selectForEveryPreference(eth0Ips);
  const inferred = inferPreference(ip, alternatives);
  const chosen = alternatives[inferred.preference];
  const ipSelection = eth0Ips.length
    ? {
        ...chosen,
        eth0Ips,
        alternatives,
        reason: inferred.matched
          ? `${runtimeName} reported ${ip} as primary, which is what ${chosen.reason}`
          : `recomputed from eth0 (${ip ? `${runtimeName} reported ${ip}, not on eth0 any more` : `${runtimeName} reports no IP now, e.g. after stop`}); ${chosen.reason}`,
      }
    : undefined;
  const portMappings = analyzePortMappings(config.port_mappings);
  const netnsClosed = verbose?.netNamespaceClosed ?? state !== 'SANDBOX_READY';
  const internalState: InternalState = state === 'SANDBOX_READY' ? 'Ready' : 'NotReady';
  const netnsPath = cni.interfaces.eth0?.sandbox || undefined;

  const out: SandboxStatus = {
    id: p.id,
    name: sandboxName(p.metadata),
    metadata: metadataOf(p.metadata),
    state,
    internalState,
    createdAt: nsToRfc3339(p.createdAt),
    createdAtNs: p.createdAt,
    labels: { ...p.labels },
    annotations: { ...p.annotations },
    runtimeHandler: p.runtimeHandler,
    hostNetwork,
    ip,
    additionalIps,
    hostPorts: portMappings.flatMap((d) => (d.cni ? [d.cni] : [])),
    bandwidth: bandwidthOf(p.annotations),
    config,
    ipPreference: inferred.preference,
    netnsClosed,
    pause: {
      containerId: p.id,
      status: verbose?.processStatus ?? 'unknown',
      ...(typeof verbose?.pid === 'number' && verbose.pid > 0 && { pid: verbose.pid }),
    },
    portMappings,
    bandwidthAnalysis: analyzeBandwidth(config.annotations),
    networks: [],
    interfaces: cni.interfaces,
    routes: cni.routes,
    dns: cni.dns,
    trace: [],
  };
  if (netnsPath) out.netnsPath = netnsPath;
  if (ipSelection) out.ipSelection = ipSelection;
  if (verbose?.runtimeSpec !== undefined) out.ociSpec = verbose.runtimeSpec;
  return out;
}
