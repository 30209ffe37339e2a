/**
 * PodSandboxStatus: unknown id ⇒ NotFound (unlike stop/remove); the engine resolves a unique prefix and words the
 * NotFound as containerd does. Verbose ⇒ info["info"] = JSON (see verbose-info.ts); not verbose ⇒ an empty info
 * map, as the API documents (containerd leaks a zero-valued document there).
 */
import type * as pb from '../generated/runtime_v1';
import type { SandboxStatus } from '../../../shared/domain/sandbox';
import { statusToProto } from '../convert/sandbox';
import { buildSandboxVerboseInfo, VERBOSE_INFO_KEY } from '../verbose-info';
import type { CriEngine } from './handler';
import { requireSandboxId } from './resolve-id';

/**
 * The wire form of a status view, converted once: the engine hands out the same status object until the sandbox
 * is saved again (read-index.ts), so a poller asking for one pod every second converts and serialises it once per
 * change instead of once per call. A status built live (a verb in flight) is a new object and simply misses.
 */
const wireCache = new WeakMap<SandboxStatus, { proto: pb.PodSandboxStatus; verbose?: string }>();

function wire(status: SandboxStatus): { proto: pb.PodSandboxStatus; verbose?: string } {
  let w = wireCache.get(status);
  if (!w) wireCache.set(status, (w = { proto: statusToProto(status) }));
  return w;
}

export async function podSandboxStatus(engine: CriEngine, req: pb.PodSandboxStatusRequest): Promise<pb.PodSandboxStatusResponse> {
  const status = await engine.status(requireSandboxId(req.podSandboxId));
  const w = wire(status);
  const info: Record<string, string> = {};
  if (req.verbose)
    info[VERBOSE_INFO_KEY] = w.verbose ??= JSON.stringify(buildSandboxVerboseInfo(status), (_k, v) =>
      typeof v === 'bigint' ? v.toString() : v,
    );
  return { status: w.proto, info, timestamp: (BigInt(Date.now()) * 1_000_000n).toString() };
}
