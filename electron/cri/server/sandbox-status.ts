/**
 * PodSandboxStatus: unknown id ⇒ NotFound (unlike stop/remove); the engine resolves a unique prefix and words the
 * NotFound as containerd does. Verbose ⇒ info["info"] = JSON (see verbose-info.ts); not verbose ⇒ an empty info
 * map, as the API documents (containerd leaks a zero-valued document there).
 */
import type * as pb from '../generated/runtime_v1';
import { statusToProto } from '../convert/sandbox';
import { buildSandboxVerboseInfo, VERBOSE_INFO_KEY } from '../verbose-info';
import type { CriEngine } from './handler';
import { requireSandboxId } from './resolve-id';

export async function podSandboxStatus(engine: CriEngine, req: pb.PodSandboxStatusRequest): Promise<pb.PodSandboxStatusResponse> {
  const status = await engine.status(requireSandboxId(req.podSandboxId));
  const info: Record<string, string> = {};
  if (req.verbose) info[VERBOSE_INFO_KEY] = JSON.stringify(buildSandboxVerboseInfo(status), (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  return { status: statusToProto(status), info, timestamp: (BigInt(Date.now()) * 1_000_000n).toString() };
}
