/**
 * Status and RuntimeConfig RPCs. Conditions come from the engine (RuntimeReady, NetworkReady with go-cni's reason),
 * verbose info carries the engine info and the loaded CNI configuration as JSON (containerd uses the keys "config"
 * and "cniconfig" for the equivalents). RuntimeConfig says CGROUPFS: critest otherwise picks a systemd cgroup parent.
 */
import * as pb from '../generated/runtime_v1';
import type { CriEngine } from './handler';

export const STATUS_INFO_CONFIG_KEY = 'config';
export const STATUS_INFO_CNI_KEY = 'cniconfig';

export async function statusResponse(engine: CriEngine, req: pb.StatusRequest): Promise<pb.StatusResponse> {
  const conditions = await engine.runtimeConditions();
  const info: Record<string, string> = {};
  if (req.verbose) {
    const [engineInfo, cni] = await Promise.all([engine.info(), engine.cniConfig()]);
    info[STATUS_INFO_CONFIG_KEY] = JSON.stringify(engineInfo);
    info[STATUS_INFO_CNI_KEY] = JSON.stringify(cni);
  }
  return {
    status: { conditions: conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })) },
    info,
    runtimeHandlers: [],
    features: undefined,
  };
}

export function runtimeConfigResponse(): pb.RuntimeConfigResponse {
  return { linux: { cgroupDriver: pb.CgroupDriver.CGROUPFS } };
}
