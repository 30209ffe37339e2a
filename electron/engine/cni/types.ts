/**
 * go-cni's shape: a small interface over a private implementation that loads the conf dir, execs plugins the way
 * libcni does (env, per-plugin stdin, prevResult chaining, capability filtering, result cache) and records every exec.
 */
import type { CniConfigView } from '../../../shared/domain/cni';
import type { PluginRuntimeConfigPreview } from '../../../shared/domain/sandbox';
import type { StepReport } from '../common/step-report';

export interface CniNamespaceOptions {
  /** CNI_ARGS pairs, in order (K8S_POD_*, IgnoreUnknown=1) */
  args: Array<[string, string]>;
  /** capability name → value; only capabilities a plugin declares are given to it in runtimeConfig */
  capabilities: Record<string, unknown>;
}

export interface CniCallRecord extends StepReport {
  /** "cni.plugin" for an exec, "cni.network" for one whole network ADD/DEL */
  step: 'cni.plugin' | 'cni.network';
}

export interface CniHooks {
  signal?: AbortSignal;
  /** timeout for each plugin exec */
  pluginTimeoutMs?: number;
  record?: (r: CniCallRecord) => void;
}

/** One plugin of one attached network list. */
export interface PluginRef {
  network: string;
  ifName: string;
  /** position in the list */
  index: number;
  type: string;
}

/** A plugin whose DEL did not succeed (failed, timed out, binary gone): what it acquired may still be held. */
export interface PendingPluginDel extends PluginRef {
  message: string;
  timedOut?: boolean;
}

/** Which plugins a DEL runs; by default every plugin of every network (loaded, or known only from the cache). */
export interface CniRemoveScope {
  /** a retry: only these plugins, each network's others already released what they held */
  only?: PluginRef[];
  /**
   * After an ADD that did not complete: per `<network>/<ifName>`, the indices of the plugins it executed. A plugin
   * that was never executed (not reached, or its binary not found) holds nothing and is not DELed.
   */
  executedOnAdd?: Record<string, number[]>;
}

// the attachments a pod's network is made of: a pod fact (common/pod-facts.ts), the result of setup() here
export type { CniSetupResult } from '../common/pod-facts';
import type { CniSetupResult } from '../common/pod-facts';

/** One network's outcome of CHECK or STATUS; a verb the list's version lacks is `notSupported`, not a failure. */
export interface CniVerbOutcome {
  network: string;
  ifName: string;
  cniVersion: string;
  outcome: 'passed' | 'failed' | 'notSupported' | 'disabled';
  message: string;
  error?: unknown;
  /** CHECK: a plugin failed with a known defect of its release (a warning; the outcome is still passed) */
  knownDefect?: { type: string; index: number; reference: string; explanation: string; version: string };
}

export interface CniManager {
  /** (Re)loads lo + the conf dir; never throws: problems land in the view's errors/ready. */
  load(): Promise<CniConfigView>;
  /** the last load */
  config(): CniConfigView;
  /** Throws CniError "cni plugin not initialized" when not ready; runs plugin STATUS for conflists >= 1.1.0. */
  status(hooks?: CniHooks): Promise<void>;
  /** ADD of every network (lo, eth0…). Throws a CniError on the first failure; the caller must call remove. */
  setup(containerId: string, netnsPath: string, opts: CniNamespaceOptions, hooks?: CniHooks): Promise<CniSetupResult>;
  /**
   * DEL of every network (each list in reverse, with the cached result as prevResult). Tolerates "not found".
   * Unlike libcni's DelNetworkList, which stops at the first error, every plugin's DEL is tried even after another
   * one failed or hung, so one broken plugin does not strand what the others hold; the failures are thrown together
   * as one CniError whose details.pending lists each plugin left (PendingPluginDel[]).
   */
  remove(containerId: string, netnsPath: string, opts: CniNamespaceOptions, hooks?: CniHooks, scope?: CniRemoveScope): Promise<void>;
  /** CHECK of every loaded network for this container (libcni CheckNetworkList each); per-network outcomes. */
  check?(containerId: string, netnsPath: string, opts: CniNamespaceOptions, hooks?: CniHooks): Promise<CniVerbOutcome[]>;
  /** STATUS of every loaded network, each reported separately (status() stops at the first failure). */
  statusEach?(hooks?: CniHooks): Promise<CniVerbOutcome[]>;
  /** What runtimeConfig each plugin would receive for these options (no exec). */
  preview(opts: CniNamespaceOptions): PluginRuntimeConfigPreview[];
  /** Paths of cache files that exist for this container (for leak checks and inspection). */
  cachedAttachments(containerId: string): Promise<string[]>;
  /** the netfilter plugins' execs (portmap, firewall) holding one of the bounded slots now, and those waiting for one */
  netfilterQueue?(): { running: number; waiting: number };
}
