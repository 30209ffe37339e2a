/**
 * Which sysctls runc 1.1 accepts for a container, checked before runc runs so the user gets an InvalidArgument that
 * names the pod setting at fault instead of a RuntimeError from deep inside `runc create` (docs/semantics.md#runc-rules;
 * runc libcontainer/configs/validate, `sysctl`).
 * A sysctl is accepted only when it belongs to a kernel namespace the container owns privately.
 */
import { invalidArgument as invalid } from '../../../shared/domain/errors';
import { sysctlNameProblem } from '../../../shared/domain/config-checks';

const IPC_SYSCTLS = new Set([
  'kernel.msgmax',
  'kernel.msgmnb',
  'kernel.msgmni',
  'kernel.sem',
  'kernel.shmall',
  'kernel.shmmax',
  'kernel.shmmni',
  'kernel.shm_rmid_forced',
]);

export interface PrivateNamespaces {
  network: boolean;
  ipc: boolean;
  uts: boolean;
}

export function checkSysctl(name: string, own: PrivateNamespaces): void {
  const field = `linux.sysctls[${JSON.stringify(name)}]`;
  const invalidArgument = (message: string) => invalid(`${field}: ${message}`, { field });
  // Form first (`net`, `net.`, `net..x`, NUL, newline): runc would pass `net.` to the kernel and fail after the
  // network is up. The schema checks this too (shared/domain/config-checks.ts); repeated for direct callers.
  const problem = sysctlNameProblem(name);
  if (problem) throw invalidArgument(problem);
  if (IPC_SYSCTLS.has(name) || name.startsWith('fs.mqueue.')) {
    if (!own.ipc)
      throw invalidArgument(
        `sysctl "${name}" is an IPC-namespace setting, but the pod uses the host IPC namespace (namespace_options.ipc = NODE); runc refuses it`,
      );
    return;
  }
  if (name.startsWith('net.')) {
    if (!own.network)
      throw invalidArgument(
        `sysctl "${name}" is a network-namespace setting, but the pod uses the host network (namespace_options.network = NODE); runc refuses it`,
      );
    return;
  }
  if (name === 'kernel.hostname') {
    throw invalidArgument(
      `sysctl "kernel.hostname" is not allowed: set the pod's hostname field instead (runc refuses the sysctl because it conflicts with the OCI hostname)`,
    );
  }
  if (name === 'kernel.domainname') {
    if (!own.uts)
      throw invalidArgument(
        `sysctl "kernel.domainname" needs the pod's own UTS namespace, which a host-network pod does not have; runc refuses it`,
      );
    return;
  }
  throw invalidArgument(
    `sysctl "${name}" is not in a separate kernel namespace (only net.*, IPC and kernel.domainname sysctls can be set per pod); runc refuses it`,
  );
}
