/**
 * The capability args a runtime hands to CNI (the values plugins read from `runtimeConfig`), built in one place for
 * the sandbox runtime and the CNI lab, in the conventional camelCase shapes of the CNI CONVENTIONS document. Which of
 * them a plugin receives is decided per plugin by what it declares (plugin-stdin.ts).
 */
import { DEFAULT_BURST_BITS } from '../../../shared/domain/bandwidth';

/** containerd passes the pod's annotations under this capability to plugins that declare it */
export const POD_ANNOTATIONS_CAPABILITY = 'io.kubernetes.cri.pod-annotations';

export interface CapabilityPortMapping {
  hostPort: number;
  containerPort: number;
  protocol: string;
  hostIP?: string;
}

/** rates in bit/s, bursts in bits; an unset burst of a direction with a rate is containerd's 2^32-1 */
export interface CapabilityBandwidth {
  ingressRate?: number;
  ingressBurst?: number;
  egressRate?: number;
  egressBurst?: number;
}

export interface CapabilityValues {
  podAnnotations?: Record<string, string>;
  portMappings?: CapabilityPortMapping[];
  bandwidth?: CapabilityBandwidth;
  dns?: { servers?: string[]; searches?: string[]; options?: string[] };
  ips?: string[];
  mac?: string;
  cgroupPath?: string;
}

function bandwidthArg(b: CapabilityBandwidth): Record<string, number> {
  return {
    ingressRate: b.ingressRate ?? 0,
    ingressBurst: b.ingressBurst ?? (b.ingressRate ? DEFAULT_BURST_BITS : 0),
    egressRate: b.egressRate ?? 0,
    egressBurst: b.egressBurst ?? (b.egressRate ? DEFAULT_BURST_BITS : 0),
  };
}

/** capability name → value; empty lists and unset values are left out, as containerd leaves them out */
export function buildCapabilityArgs(v: CapabilityValues): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (v.podAnnotations) out[POD_ANNOTATIONS_CAPABILITY] = v.podAnnotations;
  if (v.portMappings?.length)
    out.portMappings = v.portMappings.map((m) => ({
      hostPort: m.hostPort,
      containerPort: m.containerPort,
      protocol: m.protocol,
      ...(m.hostIP ? { hostIP: m.hostIP } : {}),
    }));
  if (v.bandwidth) out.bandwidth = bandwidthArg(v.bandwidth);
  if (v.dns) out.dns = { servers: v.dns.servers ?? [], searches: v.dns.searches ?? [], options: v.dns.options ?? [] };
  if (v.ips?.length) out.ips = v.ips;
  if (v.mac) out.mac = v.mac;
  if (v.cgroupPath) out.cgroupPath = v.cgroupPath;
  return out;
}
