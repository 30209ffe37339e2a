/**
 * ContainerStatus: verbose ⇒ info["info"] = JSON shaped like containerd's ContainerInfo where they overlap (sandboxID,
 * pid, runtimeType, config, runtimeSpec) plus a `podscope` section (seccomp and AppArmor as applied, conmon pid,
 * user, stop signal).
 */
import type * as pb from '../generated/runtime_v1';
import type { ContainerStatusView } from '../../../shared/domain/container';
import { statusToProto } from '../convert/container';
import { VERBOSE_INFO_KEY } from '../verbose-info';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';

/**
 * The wire form of a status view, converted once: the engine hands out the same view until the container is saved
 * again (containers/store.ts statusView), so a poller converts and serialises it once per change instead of once per
 * call (the server's serialiser reuses the status bytes too: wire-cache.ts). A view built live (a verb in flight) is
 * a new object and simply misses.
 */
const wireCache = new WeakMap<ContainerStatusView, { proto: pb.ContainerStatus; verbose?: string }>();

function wire(s: ContainerStatusView): { proto: pb.ContainerStatus; verbose?: string } {
  let w = wireCache.get(s);
  if (!w) wireCache.set(s, (w = { proto: statusToProto(s) }));
  return w;
}

function verboseInfo(s: ContainerStatusView): string {
  const { config, ociSpec, ...rest } = s;
  return JSON.stringify({
    sandboxID: s.podSandboxId,
    pid: s.pid ?? 0,
    runtimeType: 'podscope.runc',
    config,
    runtimeSpec: ociSpec,
    podscope: { format: 'podscope.container-status/v1', ...rest },
  });
}

export async function containerStatus(engine: CriEngine, req: pb.ContainerStatusRequest): Promise<pb.ContainerStatusResponse> {
  const s = await engine.containerStatus(requireContainerId(req.containerId));
  const w = wire(s);
  const info: Record<string, string> = {};
  if (req.verbose) info[VERBOSE_INFO_KEY] = w.verbose ??= verboseInfo(s);
  return { status: w.proto, info };
}
