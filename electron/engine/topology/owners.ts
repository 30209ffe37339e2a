/**
 * Which plugin created which interface, from what the sandbox recorded when it ran: each plugin's ADD result (its
 * stdout, in the order the list ran them) lists the interfaces it knows of, and a plugin passes on what the ones
 * before it listed, so the first result that names an interface names its creator. The plugin's config (its stdin)
 * is kept beside it: host-device's `device` and macvlan's `master` say what the plugin was told to use.
 * Not read from the kernel: this is the CNI side of the picture (docs/semantics.md#topology).
 */
import type { TopologyOwner } from '../../../shared/domain/topology';
import type { TraceEntry } from '../../../shared/domain/trace';

export interface InterfaceClaim {
  owner: TopologyOwner;
  /** the plugin's config as it was given on stdin (without prevResult) */
  config: Record<string, unknown>;
}

export interface PodOwners {
  /** interface name inside the pod's netns → the plugin that first listed it */
  pod: Map<string, InterfaceClaim>;
  /** host interface name (veth, bridge, ifb) → the plugin that first listed it */
  host: Map<string, InterfaceClaim>;
}

export const noOwners = (): PodOwners => ({ pod: new Map(), host: new Map() });

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** From the run's successful plugin ADDs, in the order they ran. */
export function ownersFromTrace(trace: TraceEntry[]): PodOwners {
  const out = noOwners();
  for (const t of trace) {
    const call = t.plugin;
    if (t.phase !== 'run' || !t.ok || !call || call.verb !== 'ADD' || call.exitCode !== 0) continue;
    const result = parseObject(call.stdout);
    const stdin = parseObject(call.stdin) ?? {};
    const { prevResult: _prev, ...config } = stdin;
    const interfaces = Array.isArray(result?.interfaces) ? (result.interfaces as unknown[]) : [];
    for (const i of interfaces) {
      if (typeof i !== 'object' || i === null) continue;
      const { name, sandbox } = i as { name?: unknown; sandbox?: unknown };
      if (typeof name !== 'string' || !name) continue;
      const claims = typeof sandbox === 'string' && sandbox ? out.pod : out.host;
      if (claims.has(name)) continue;
      claims.set(name, { owner: { plugin: call.type, network: call.network, index: call.index }, config });
    }
  }
  return out;
}
