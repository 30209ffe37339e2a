/** The plugin environment (libcni invoke.Args.AsEnv): the engine's own env with all six CNI_* variables appended. */
import type { CniVerb } from '../../../shared/domain/sandbox';

export interface CniEnvInput {
  verb: CniVerb;
  containerId: string;
  netns: string;
  ifName: string;
  args: Array<[string, string]>;
  binDirs: string[];
}

export function formatCniArgs(args: Array<[string, string]>): string {
  return args.map(([k, v]) => `${k}=${v}`).join(';');
}

/** Just the CNI_* variables, always all six (skel plugins insist on CNI_PATH even when the spec calls it optional). */
export function cniEnv(input: CniEnvInput): Record<string, string> {
  return {
    CNI_COMMAND: input.verb,
    CNI_CONTAINERID: input.containerId,
    CNI_NETNS: input.netns,
    CNI_IFNAME: input.ifName,
    CNI_ARGS: formatCniArgs(input.args),
    CNI_PATH: input.binDirs.join(':'),
  };
}

/** Later wins, so stale CNI_* values inherited from the engine's env are replaced. */
export function pluginEnv(base: NodeJS.ProcessEnv, cni: Record<string, string>): NodeJS.ProcessEnv {
  return { ...base, ...cni };
}
