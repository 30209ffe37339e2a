/** The container runtime of each runtime handler, each container under conmon. */
import type { ProcessRunner } from '../os/exec';
import {
  containerRuntimeRoot,
  DEFAULT_RUNTIME_HANDLER,
  ociRuntimeBinary,
  RUNTIME_HANDLERS,
  type RuntimeBinaryPaths,
} from '../runtime/oci-runtime';
import { ConmonContainerRuntime } from './conmon';
import type { ContainerRuntime } from './runtime';

/** One runtime per handler, each under its own root; `runtime` is the default handler's (runc). */
export function ociContainerRuntimes(
  options: RuntimeBinaryPaths & { runDir: string; conmonPath?: string },
  runner: ProcessRunner,
): { runtime: ContainerRuntime; runtimes: Record<string, ContainerRuntime> } {
  const runtimes: Record<string, ContainerRuntime> = {};
  for (const handler of RUNTIME_HANDLERS) {
    const o = { binary: ociRuntimeBinary(handler, options), root: containerRuntimeRoot(options.runDir, handler), runner };
    runtimes[handler] = new ConmonContainerRuntime({ ...o, conmonPath: options.conmonPath });
  }
  return { runtime: runtimes[DEFAULT_RUNTIME_HANDLER]!, runtimes };
}
