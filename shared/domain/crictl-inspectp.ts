/**
 * What `crictl inspectp <id>` prints for a sandbox: {"status": PodSandboxStatus as protobuf JSON (lowerCamelCase
 * fields, enum names, int64 as decimal strings, defaults included), "info": the verbose info document}. crictl
 * unmarshals each info value and puts it at the top level under its key; containerd and Podscope use the key "info"
 * (shared/domain/verbose-info.ts), hence the two keys. Users paste this into bug reports, so the UI offers it as is.
 */
import type { SandboxStatus, SandboxSummary } from './sandbox';
import { buildSandboxVerboseInfo, type SandboxVerboseInfo } from './verbose-info';

/** runtime.v1 NamespaceMode by number */
const NAMESPACE_MODE = ['POD', 'CONTAINER', 'NODE', 'TARGET'] as const;

/**
 * created_at in ns as a decimal string. cri-client rejects 0, so fall back to the RFC 3339 time (ms precision)
 * and finally to "now" — the same "never 0" rule containerd applies with its metadata record.
 */
export function createdAtNs(s: Pick<SandboxSummary, 'createdAtNs' | 'createdAt'>): string {
  if (/^[1-9]\d*$/.test(s.createdAtNs ?? '')) return s.createdAtNs;
  const ms = Date.parse(s.createdAt);
  return (BigInt(Number.isFinite(ms) && ms > 0 ? ms : Date.now()) * 1_000_000n).toString();
}

export interface CrictlInspectp {
  status: {
    id: string;
    metadata: { attempt: number; name: string; namespace: string; uid: string };
    state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
    createdAt: string;
    network: { additionalIps: Array<{ ip: string }>; ip: string };
    linux: { namespaces: { options: { ipc: string; network: string; pid: string; targetId: string; userNsOptions: null } | null } };
    labels: Record<string, string>;
    annotations: Record<string, string>;
    runtimeHandler: string;
  };
  info: SandboxVerboseInfo;
}

export function crictlInspectp(s: SandboxStatus): CrictlInspectp {
  // as the CRI server answers: no address once the netns is closed (stopped) or for host-network pods
  const showIps = !s.hostNetwork && !s.netnsClosed;
  const ns = s.config.linux?.security_context?.namespace_options;
  const mode = (n: number | undefined) => NAMESPACE_MODE[n ?? 0] ?? String(n);
  return {
    status: {
      id: s.id,
      metadata: { attempt: s.metadata.attempt, name: s.metadata.name, namespace: s.metadata.namespace, uid: s.metadata.uid },
      state: s.state,
      createdAt: createdAtNs(s),
      network: { additionalIps: showIps ? s.additionalIps.map((ip) => ({ ip })) : [], ip: showIps ? s.ip : '' },
      linux: {
        namespaces: {
          options: ns
            ? { ipc: mode(ns.ipc), network: mode(ns.network), pid: mode(ns.pid), targetId: ns.target_id ?? '', userNsOptions: null }
            : null,
        },
      },
      labels: { ...s.labels },
      annotations: { ...s.annotations },
      runtimeHandler: s.runtimeHandler,
    },
    info: buildSandboxVerboseInfo(s),
  };
}

/** JSON text as crictl indents it (two spaces); bigints, if any, as decimal strings */
export function crictlInspectpText(s: SandboxStatus): string {
  return JSON.stringify(crictlInspectp(s), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
}
