/** The container runtime of each runtime handler, under the monitor the engine options name (log shim or conmon). */
import type { ProcessRunner } from '../os/exec';
import {
  containerRuntimeRoot,
  DEFAULT_RUNTIME_HANDLER,
  ociRuntimeBinary,
  RUNTIME_HANDLERS,
  type RuntimeBinaryPaths,
} from '../runtime/oci-runtime';
import { ConmonContainerRuntime } from './conmon';
import { OciContainerRuntime, type ContainerRuntime } from './runtime';

/** One runtime per handler, each under its own root; `runtime` is the default handler's (runc). */
export function ociContainerRuntimes(
  options: RuntimeBinaryPaths & { runDir: string; containerMonitor?: 'shim' | 'conmon' },
  runner: ProcessRunner,
): { runtime: ContainerRuntime; runtimes: Record<string, ContainerRuntime> } {
  const runtimes: Record<string, ContainerRuntime> = {};
  for (const handler of RUNTIME_HANDLERS) {
    const o = { binary: ociRuntimeBinary(handler, options), root: containerRuntimeRoot(options.runDir, handler), runner };
    runtimes[handler] = options.containerMonitor === 'conmon' ? new ConmonContainerRuntime(o) : new OciContainerRuntime(o);
  }
  return { runtime: runtimes[DEFAULT_RUNTIME_HANDLER]!, runtimes };
}
