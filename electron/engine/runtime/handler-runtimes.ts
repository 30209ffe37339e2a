/** The container runtime of each runtime handler, each container (an app's, a pod's pause) under conmon. */
import type { ProcessRunner } from '../os/exec';
import {
  containerRuntimeRoot,
  DEFAULT_RUNTIME_HANDLER,
  ociRuntimeBinary,
  RUNTIME_HANDLERS,
  type RuntimeBinaryPaths,
  type RuntimeHandlerName,
} from './oci-runtime';
import { isProcessAlive } from '../common/proc';
import { HostCgroupReader } from './cgroups';
import { ConmonContainerRuntime } from './conmon';
import type { ContainerRuntime, HostProcessKiller } from './container-runtime';

/** The host's own: kill(2) (a process already gone is no error), /proc and the cgroup's procs. */
export function hostProcessKiller(cgroups = new HostCgroupReader()): HostProcessKiller {
  return {
    signal: (pid, signal) => {
      try {
        process.kill(pid, signal);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
      }
    },
    processAlive: isProcessAlive,
    procs: (path) => cgroups.procs(path),
  };
}

/**
 * The runtime of a handler under a root: the one implementation for app containers and pause containers alike. Its
 * kills reach a container's processes through `killer` where they can.
 */
export function conmonRuntimeAt(
  options: RuntimeBinaryPaths & { conmonPath?: string },
  runner: ProcessRunner,
  killer?: HostProcessKiller,
): (handler: RuntimeHandlerName, root: string) => ConmonContainerRuntime {
  return (handler, root) =>
    new ConmonContainerRuntime({ binary: ociRuntimeBinary(handler, options), root, runner, killer, conmonPath: options.conmonPath });
}

/**
 * One runtime per handler, each under its own root; `runtime` is the default handler's (runc). Their kills reach a
 * container's processes through `killer` where they can (default: the host's).
 */
export function ociContainerRuntimes(
  options: RuntimeBinaryPaths & { runDir: string; conmonPath?: string },
  runner: ProcessRunner,
  killer: HostProcessKiller = hostProcessKiller(),
): { runtime: ContainerRuntime; runtimes: Record<string, ContainerRuntime> } {
  const at = conmonRuntimeAt(options, runner, killer);
  const runtimes: Record<string, ContainerRuntime> = {};
  for (const handler of RUNTIME_HANDLERS) runtimes[handler] = at(handler, containerRuntimeRoot(options.runDir, handler));
  return { runtime: runtimes[DEFAULT_RUNTIME_HANDLER]!, runtimes };
}
