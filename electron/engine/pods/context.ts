/** What the pod verbs share: their OS touch points (each behind an interface) and the pods' state. Only pods/ takes it: every other feature declares its own narrow deps. */
import type { PodSandboxConfig } from '../../../shared/domain/config';
import type { PauseSpecInput } from '../runtime/oci-spec';
import type { RuntimeHandlerInfo, SandboxEvent } from '../../../shared/domain/sandbox';
import type { CniManager } from '../cni/types';
import type { LiveReader } from '../netns/live-reader';
import type { NetnsManager } from '../netns/types';
import type { EngineOptions } from '../common/options';
import type { PauseRuntime } from '../runtime/types';
import type { KeyedMutex } from '../common/keyed-mutex';
import type { NameRegistrar } from '../common/name-registrar';
import type { SandboxStore } from './store';
import type { EngineOwner } from './ownership';

/** Per-sandbox host files (hostname, hosts, resolv.conf) and the /dev/shm tmpfs. */
export interface SandboxFiles {
  /** Writes the files and mounts shm; returns the paths the OCI spec binds. Undo with `cleanup`. */
  prepare(input: {
    id: string;
    config: PodSandboxConfig;
    rootDir: string;
    runDir: string;
    signal?: AbortSignal;
  }): Promise<{ resolvConfPath: string; shmPath: string }>;
  /** Unmounts shm and deletes both directories. Idempotent. */
  cleanup(input: { rootDir: string; runDir: string; signal?: AbortSignal }): Promise<void>;
  /** Unmounts shm only (stop), keeping the files. Idempotent. */
  unmountShm(input: { runDir: string; signal?: AbortSignal }): Promise<void>;
}

export interface PodsContext {
  options: EngineOptions;
  netns: NetnsManager;
  cni: CniManager;
  runtime: PauseRuntime;
  files: SandboxFiles;
  liveReader: LiveReader;
  /** throws InvalidArgument for configs runc would refuse */
  buildPauseSpec(input: PauseSpecInput): unknown;
  /** the engine's own oom_score_adj: the pause container is never given a lower one (docs/semantics.md#machine-limits) */
  engineOomScoreAdj: number;
  store: SandboxStore;
  names: NameRegistrar;
  locks: KeyedMutex;
  emit(e: SandboxEvent): void;
  /** whether the pause process still runs (no subreaper here, so the engine looks at the pid) */
  processAlive(pid: number, startTicks?: number): Promise<boolean>;
  /** kill(pid, 0): cheap existence, for the liveness of a pause under a live conmon (status.ts runsUnderLiveMonitor); absent: always the exact check */
  processExists?(pid: number): boolean;
  /** timeout for undo steps after a failure, and for stop/remove steps */
  cleanupTimeoutMs: number;
  /** CLI `pods`/`inspectp`: look, never change anything on the host (no verbs, no record writes, no start-up GC) */
  readOnly: boolean;
  /** what marks the host resources this engine owns; set by start() */
  owner: EngineOwner;
  /** one line per notable start-up action (garbage collected items) */
  log?: (line: string) => void;
  /** the OCI runtimes a pod may name in runtime_handler, as probed at start-up (absent: not probed, all assumed present) */
  runtimeHandlers?: RuntimeHandlerInfo[];
  /** the pod's containers: stopped before the pause (StopPodSandbox), removed before the sandbox (RemovePodSandbox) */
  podContainers?: { stopAll(sandboxId: string): Promise<void>; removeAll(sandboxId: string): Promise<void> };
}
