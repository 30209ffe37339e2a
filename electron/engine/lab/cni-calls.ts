/**
 * How the lab calls the CNI module (../cni/network-ops.ts, the same list invocation the sandbox runtime uses): the
 * lab's network (only the conflist text, never plugins from <confdir>/<network>/), its CNI_ARGS, its capability args
 * (the shared builder), its exec context, and its recording of each plugin exec as a LabPluginTrace.
 */
import { serializeError } from '../../../shared/domain/errors';
import type { LabCapabilities, LabPhase, LabPluginTrace } from '../../../shared/domain/lab';
import { buildCapabilityArgs } from '../cni/capability-args';
import type { LoadedNetwork } from '../cni/conf-dir';
import { confListFromBytes } from '../cni/conf-list';
import type { Attachment } from '../cni/network-ops';
import { execContextFor, type ExecContext } from '../cni/plugin-exec';
import type { CniCallRecord } from '../cni/types';
import type { ProcessRunner } from '../os/exec';

export const LAB_IFNAME = 'eth0';

export interface LabOptions {
  stateDir: string;
  netnsDir: string;
  cniConfDir: string;
  cniBinDirs: string[];
  pluginTimeoutMs: number;
}

/** what every lab exec needs from the engine */
export interface LabExecDeps {
  options: LabOptions;
  runner: ProcessRunner;
  env?: NodeJS.ProcessEnv;
}

export function labCniArgs(id: string, containerId: string): Array<[string, string]> {
  return [
    ['IgnoreUnknown', '1'],
    ['K8S_POD_NAMESPACE', 'podscope-lab'],
    ['K8S_POD_NAME', id],
    ['K8S_POD_INFRA_CONTAINER_ID', containerId],
  ];
}

/** the conflist text as one network; plugins from <confdir>/<network>/*.conf are not added */
export function labNetwork(text: string, ifName: string): LoadedNetwork {
  return { list: confListFromBytes(Buffer.from(text)), ifName, builtin: false, binaries: [] };
}

export function labAttachment(run: { id: string; containerId: string; netns: string }, capabilities: LabCapabilities): Attachment {
  return {
    containerId: run.containerId,
    netns: run.netns,
    opts: { args: labCniArgs(run.id, run.containerId), capabilities: buildCapabilityArgs(capabilities) },
  };
}

/** the lab's hooks: its plugin timeout and its own recording (plugin execs only, each tagged with the run's phase) */
export function labExecContext(deps: LabExecDeps, phase: () => LabPhase, onTrace: (t: LabPluginTrace) => void): ExecContext {
  const { options } = deps;
  return execContextFor(
    { runner: deps.runner, binDirs: options.cniBinDirs, baseEnv: deps.env ?? process.env, defaultTimeoutMs: options.pluginTimeoutMs },
    {
      record: (r) => {
        const trace = pluginTrace(r, phase());
        if (trace) onTrace(trace);
      },
    },
  );
}

/** a plugin exec as the lab records it (other trace steps are not plugin execs: undefined) */
export function pluginTrace(r: CniCallRecord, phase: LabPhase): LabPluginTrace | undefined {
  if (r.step !== 'cni.plugin' || !r.plugin) return undefined;
  return {
    phase,
    verb: r.plugin.verb,
    index: r.plugin.index,
    type: r.plugin.type,
    binary: r.plugin.binary,
    stdin: r.plugin.stdin,
    stdout: r.plugin.stdout,
    stderr: r.plugin.stderr,
    exitCode: r.plugin.exitCode,
    durationMs: r.durationMs,
    ok: r.ok,
    startedAt: r.startedAt,
    ...(r.error ? { error: serializeError(r.error) } : {}),
  };
}
