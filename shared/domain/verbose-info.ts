/**
 * PodSandboxStatus verbose info: the value of info["info"], a JSON document shaped like containerd's SandboxInfo
 * (docs/semantics.md#verbose-info) where the two overlap — pid, processStatus, netNamespaceClosed, config (CRI snake_case, numeric enums),
 * runtimeSpec (OCI), cniResult (go-cni Result, PascalCase) — plus a `podscope` section only Podscope has: the IP
 * selection with its reason, port-mapping and bandwidth decisions, per-network CNI results and the per-plugin trace.
 * The CRI server encodes it, the client decodes Podscope's and containerd's (electron/cri/client/decode-status.ts), and
 * the renderer shows it in the crictl inspectp shape (crictl-inspectp.ts); pure, so it lives in shared/.
 */
import type { CniDns, CniRoute, InterfaceConfig } from './cni';
import type { SandboxStatus } from './sandbox';

/** The single key containerd (and Podscope) use in PodSandboxStatusResponse.info. */
export const VERBOSE_INFO_KEY = 'info';

/** go-cni's IPConfig: net.IP values marshal as strings; a nil gateway marshals as "". */
export interface GoCniIpConfig {
  IP: string;
  Gateway?: string | null;
}
export interface GoCniConfig {
  IPConfigs?: GoCniIpConfig[] | null;
  Mac?: string;
  Sandbox?: string;
  PciID?: string;
  SocketPath?: string;
}
/** go-cni's Result as encoding/json writes it (no JSON tags on the struct, so field names are PascalCase). */
export interface GoCniResult {
  Interfaces?: Record<string, GoCniConfig> | null;
  DNS?: CniDns[] | null;
  Routes?: CniRoute[] | null;
}

/** Everything in SandboxStatus except what already sits at the top level (config, runtimeSpec). */
export type PodscopeVerboseSection = Omit<SandboxStatus, 'config' | 'ociSpec'> & { format: 'podscope.sandbox-status/v1' };

export interface SandboxVerboseInfo {
  pid?: number;
  processStatus: string;
  netNamespaceClosed: boolean;
  netNamespacePath?: string;
  runtimeType?: string;
  config: unknown;
  runtimeSpec?: unknown;
  cniResult: GoCniResult | null;
  podscope?: PodscopeVerboseSection;
}

/** go-cni createResult's view ⇒ its JSON form. */
export function toGoCniResult(interfaces: Record<string, InterfaceConfig>, routes: CniRoute[], dns: CniDns[]): GoCniResult {
  const out: Record<string, GoCniConfig> = {};
  for (const [name, cfg] of Object.entries(interfaces)) {
    out[name] = {
      IPConfigs: cfg.ipConfigs.map((c) => ({ IP: c.ip, Gateway: c.gateway ?? '' })),
      Mac: cfg.mac ?? '',
      Sandbox: cfg.sandbox ?? '',
      PciID: '',
      SocketPath: '',
    };
  }
  return { Interfaces: out, DNS: dns, Routes: routes };
}

export function fromGoCniResult(r: GoCniResult | null | undefined): {
  interfaces: Record<string, InterfaceConfig>;
  routes: CniRoute[];
  dns: CniDns[];
} {
  const interfaces: Record<string, InterfaceConfig> = {};
  for (const [name, cfg] of Object.entries(r?.Interfaces ?? {})) {
    const view: InterfaceConfig = {
      ipConfigs: (cfg.IPConfigs ?? []).map((c) => (c.Gateway ? { ip: c.IP, gateway: c.Gateway } : { ip: c.IP })),
    };
    if (cfg.Mac) view.mac = cfg.Mac;
    if (cfg.Sandbox) view.sandbox = cfg.Sandbox;
    interfaces[name] = view;
  }
  return { interfaces, routes: r?.Routes ?? [], dns: r?.DNS ?? [] };
}

export function buildSandboxVerboseInfo(s: SandboxStatus): SandboxVerboseInfo {
  const { config, ociSpec, ...rest } = s;
  // go-cni only has a result once CNI ran; host-network pods never have one (containerd writes null).
  const ranCni = !s.hostNetwork && (s.networks.length > 0 || Object.keys(s.interfaces).length > 0);
  const info: SandboxVerboseInfo = {
    processStatus: s.pause.status,
    netNamespaceClosed: s.netnsClosed,
    runtimeType: 'podscope.runc',
    config,
    runtimeSpec: ociSpec,
    cniResult: ranCni ? toGoCniResult(s.interfaces, s.routes, s.dns) : null,
    podscope: { format: 'podscope.sandbox-status/v1', ...rest },
  };
  if (s.pause.pid !== undefined) info.pid = s.pause.pid;
  if (s.netnsPath !== undefined) info.netNamespacePath = s.netnsPath;
  return info;
}
