/**
 * Which sysctls runc 1.1 accepts for a container, checked before runc runs so the user gets an InvalidArgument that
 * names the pod setting at fault instead of a RuntimeError from deep inside `runc create` (docs/semantics.md#runc-rules;
 * runc libcontainer/configs/validate, `sysctl`).
 * A sysctl is accepted only when it belongs to a kernel namespace the container owns privately.
 */
import { invalidArgument as invalid, PodscopeError } from '../../../shared/domain/errors';
import { sysctlNameProblem, sysctlValueProblem } from '../../../shared/domain/config-checks';
import { sysctlValueFormProblem } from '../../../shared/domain/sysctl-values';

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

/** `value`, when given, must also be one the kernel takes for that sysctl (shared/domain/sysctl-values.ts). */
export function checkSysctl(name: string, own: PrivateNamespaces, value?: string): void {
  const field = `linux.sysctls[${JSON.stringify(name)}]`;
  const invalidArgument = (message: string) => invalid(`${field}: ${message}`, { field });
  // Form first (`net`, `net.`, `net..x`, NUL, newline): runc would pass `net.` to the kernel and fail after the
  // network is up. The schema checks this too (shared/domain/config-checks.ts); repeated for direct callers.
  const problem = sysctlNameProblem(name);
  if (problem) throw invalidArgument(problem);
  const valueProblem = value === undefined ? undefined : (sysctlValueProblem(value) ?? sysctlValueFormProblem(name, value));
  if (valueProblem) throw invalidArgument(valueProblem);
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

/**
 * runc reports a sysctl the kernel refused as `write /proc/sys/<path>: <errno text>` (or `open …` for one that does
 * not exist). That is the caller's value or name at fault, not the runtime: an InvalidArgument naming the sysctl and
 * the value from the spec, for whatever the checks above did not foresee. Undefined when no message is one of these.
 */
export function sysctlWriteRefusal(runcMessages: string[], spec: unknown): PodscopeError | undefined {
  for (const message of runcMessages) {
    const m = /\b(write|open) \/proc\/sys\/(\S+?): (.+)$/.exec(message);
    if (!m) continue;
    const path = m[2]!;
    const sysctls = (spec as { linux?: { sysctl?: Record<string, string> } } | undefined)?.linux?.sysctl ?? {};
    const name = Object.keys(sysctls).find((k) => k.replace(/\./g, '/') === path || k === path) ?? path.replace(/\//g, '.');
    const value = sysctls[name];
    const field = `linux.sysctls[${JSON.stringify(name)}]`;
    const what =
      m[1] === 'open'
        ? `the kernel has no sysctl ${JSON.stringify(name)} (${m[3]})`
        : `the kernel refused ${value === undefined ? 'the value' : `value ${JSON.stringify(value)}`} (${m[3]})`;
    return new PodscopeError('InvalidArgument', `${field}: ${what}`, { details: { field, runcErrors: runcMessages } });
  }
  return undefined;
}
