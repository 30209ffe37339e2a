/**
 * Status and RuntimeConfig RPCs. Conditions come from the engine (RuntimeReady, NetworkReady with go-cni's reason),
 * verbose info carries the engine info and the loaded CNI configuration as JSON (containerd uses the keys "config"
 * and "cniconfig" for the equivalents). RuntimeConfig says CGROUPFS: critest otherwise picks a systemd cgroup parent.
 */
import * as pb from '../generated/runtime_v1';
import type { CniConfigView } from '../../../shared/domain/cni';
import type { RuntimeHandlerInfo } from '../../../shared/domain/sandbox';
import type { CriEngine } from './handler';

export const STATUS_INFO_CONFIG_KEY = 'config';
export const STATUS_INFO_CNI_KEY = 'cniconfig';
/** containerd's key: "OK", or why the CNI configuration could not be loaded (Status itself still succeeds). */
export const STATUS_INFO_CNI_LOAD_KEY = 'lastCNILoadStatus';
export const CNI_LOAD_OK = 'OK';

export async function statusResponse(engine: CriEngine, req: pb.StatusRequest): Promise<pb.StatusResponse> {
  const [conditions, engineInfo] = await Promise.all([engine.runtimeConditions(), engine.info()]);
  const info: Record<string, string> = {};
  if (req.verbose) {
    // As in containerd, a CNI load problem never fails Status: it is reported in the info instead.
    const cni = await engine.cniConfig().then(
      (view) => ({ view }),
      (e: unknown) => ({ error: e instanceof Error ? e.message || e.name : String(e) }),
    );
    info[STATUS_INFO_CONFIG_KEY] = JSON.stringify(engineInfo);
    if ('view' in cni) {
      info[STATUS_INFO_CNI_KEY] = JSON.stringify(cni.view);
      // the engine's CNI manager never throws on a bad conf dir: it keeps a not-ready view with the load errors,
      // which containerd would report here as the last load's failure
      info[STATUS_INFO_CNI_LOAD_KEY] = cni.view.ready ? CNI_LOAD_OK : cniLoadProblem(cni.view);
    } else {
      info[STATUS_INFO_CNI_LOAD_KEY] = cni.error || 'failed to load the CNI configuration';
    }
  }
  return {
    status: { conditions: conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })) },
    info,
    runtimeHandlers: criRuntimeHandlers(engineInfo.runtimeHandlers ?? []),
    features: undefined,
  };
}

/**
 * The handlers a pod can ask for, as containerd lists its configured runtimes: each usable one by name, and the
 * default once more under the empty name (what an empty runtime_handler selects). A handler whose binary is missing
 * is left out: RunPodSandbox refuses it. Neither recursive read-only mounts nor user namespaces are offered (the
 * spec builder sets neither), so both features are false.
 */
export function criRuntimeHandlers(handlers: readonly RuntimeHandlerInfo[]): pb.RuntimeHandler[] {
  const features = { recursiveReadOnlyMounts: false, userNamespaces: false };
  const usable = handlers.filter((h) => h.present);
  const def = usable.find((h) => h.default);
  return [...(def ? [{ name: '', features }] : []), ...usable.map((h) => ({ name: h.name, features }))];
}

function cniLoadProblem(view: CniConfigView): string {
  const errors = view.errors.map((e) => `${e.source}: ${e.message}`);
  return [view.notReadyReason ?? 'cni plugin not initialized', ...errors].join('; ');
}

export function runtimeConfigResponse(): pb.RuntimeConfigResponse {
  return { linux: { cgroupDriver: pb.CgroupDriver.CGROUPFS } };
}
