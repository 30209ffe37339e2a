/** The pause container, run by an OCI runtime (runc) under the engine's own --root and watched by conmon. */
import type { StepReport } from '../step-report';

export interface PauseState {
  id: string;
  pid: number;
  /** runc status: creating | created | running | paused | stopped */
  status: string;
  bundle: string;
}

export interface PauseExitInfo {
  exitCode: number;
  /** the exit file's mtime, in nanoseconds since the epoch */
  finishedAtNs: string;
}

export interface RuntimeContainer {
  id: string;
  status: string;
  annotations: Record<string, string>;
}

/** called once per runtime command with what ran and how long it took */
export type RuntimeStepReporter = (step: StepReport) => void;

export interface PauseRuntime {
  /** Builds (once) the pause rootfs from the host's static busybox; returns its absolute path. */
  ensureRootfs(): Promise<string>;
  /**
   * Writes config.json into bundleDir, then starts it under conmon (`runc create` by conmon, then `runc start`).
   * Returns the pause pid and conmon's. A failure leaves no runtime container and no conmon behind.
   */
  start(
    id: string,
    bundleDir: string,
    spec: unknown,
    opts: { signal?: AbortSignal; report?: RuntimeStepReporter },
  ): Promise<{ pid: number; monitorPid?: number }>;
  /**
   * SIGKILL then wait until its init is gone, and its conmon with it (so the exit file is written). Idempotent: an
   * unknown container is a success.
   */
  stop(id: string, opts?: { signal?: AbortSignal; report?: RuntimeStepReporter }): Promise<void>;
  /** `runc delete --force`. Idempotent. */
  delete(id: string, opts?: { signal?: AbortSignal; report?: RuntimeStepReporter }): Promise<void>;
  /**
   * What conmon wrote when the pause exited (its exit file in the bundle): the code (128+N for signal N) and the
   * finish time; undefined while it runs, or when no conmon watched it (a pause started by an older engine).
   */
  exitInfo(id: string, bundleDir: string): Promise<PauseExitInfo | undefined>;
  /** undefined when runc does not know the container */
  state(id: string): Promise<PauseState | undefined>;
  /** ids of every container under the engine's runc root */
  list(): Promise<string[]>;
  /** every container under the runc root with its OCI annotations (they say which engine owns it) */
  listContainers(): Promise<RuntimeContainer[]>;
}
