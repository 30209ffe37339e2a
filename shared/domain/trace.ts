/**
 * The lifecycle trace: one entry per step the engine took for a sandbox, with the exact plugin call where the step
 * ran a CNI plugin. The sandbox views (sandbox.ts) and the measurement reports (measure.ts) both carry entries.
 */
import type { SerializedError } from './errors';

export type CniVerb = 'ADD' | 'DEL' | 'CHECK' | 'STATUS' | 'VERSION' | 'GC';

export interface PluginCall {
  network: string;
  ifName: string;
  type: string;
  verb: CniVerb;
  /** index of the plugin in its conflist */
  index: number;
  binary?: string;
  /** the CNI_* environment exactly as sent */
  env: Record<string, string>;
  /** the exact bytes written to the plugin's stdin */
  stdin: string;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal?: string | null;
  timedOut?: boolean;
}

/** watch: what the engine noticed on its own (the pause process exiting); check: CNI CHECK on demand */
/** a sandbox's verbs and watches; `create`/`start` are a container's (ContainerStatusView.trace) */
export type TracePhase = 'run' | 'stop' | 'remove' | 'cleanup' | 'recover' | 'watch' | 'check' | 'create' | 'start';

export interface TraceEntry {
  seq: number;
  phase: TracePhase;
  /** e.g. "netns.create", "cni.add", "cni.plugin", "runc.create", "runc.start" */
  step: string;
  /** a short human label, e.g. "ADD bridge (containerd-net/eth0)" */
  label: string;
  startedAt: string;
  durationMs: number;
  ok: boolean;
  error?: SerializedError;
  plugin?: PluginCall;
  /** free-form facts about the step (netns path, pid, command line…) */
  detail?: Record<string, unknown>;
}
