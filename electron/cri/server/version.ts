/** Version RPC. cri-client (crictl, critest, kubelet) rejects a response with any of the four strings empty. */
import type * as pb from '../generated/runtime_v1';

/** The kubelet runtime API version string, as containerd reports it. */
export const CRI_VERSION = '0.1.0';
export const RUNTIME_NAME = 'podscope';
export const RUNTIME_API_VERSION = 'v1';

export function versionResponse(runtimeVersion: string): pb.VersionResponse {
  return {
    version: CRI_VERSION,
    runtimeName: RUNTIME_NAME,
    runtimeVersion: runtimeVersion || 'unknown',
    runtimeApiVersion: RUNTIME_API_VERSION,
  };
}
