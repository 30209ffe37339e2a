/**
 * ContainerStatus: verbose ⇒ info["info"] = JSON shaped like containerd's ContainerInfo where they overlap (sandboxID,
 * pid, runtimeType, config, runtimeSpec) plus a `podscope` section (seccomp and AppArmor as applied, conmon pid,
 * user, stop signal).
 */
import type * as pb from '../generated/runtime_v1';
import { statusToProto } from '../convert/container';
import { VERBOSE_INFO_KEY } from '../verbose-info';
import type { CriEngine } from './handler';
import { requireContainerId } from './resolve-id';

export async function containerStatus(engine: CriEngine, req: pb.ContainerStatusRequest): Promise<pb.ContainerStatusResponse> {
  const s = await engine.containerStatus(requireContainerId(req.containerId));
  const info: Record<string, string> = {};
  if (req.verbose) {
    const { config, ociSpec, ...rest } = s;
    info[VERBOSE_INFO_KEY] = JSON.stringify({
      sandboxID: s.podSandboxId,
      pid: s.pid ?? 0,
      runtimeType: 'podscope.runc',
      config,
      runtimeSpec: ociSpec,
      podscope: { format: 'podscope.container-status/v1', ...rest },
    });
  }
  return { status: statusToProto(s), info };
}
