/** The pause container, run by its pod's OCI runtime (runc, crun) under that runtime's pause root and watched by conmon. */
import type { StepReport } from '../common/step-report';

/** what `<runtime> state` says of a container (a pause or an app container) */
export interface RuntimeState {
  id: string;
  pid: number;
  /** the runtime's status: creating | created | running | paused | stopped */
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

/**
 * Where a pause container lives: the runtime handler that runs it (the pod's runtime_handler, as in containerd and
 * CRI-O) and that runtime's `--root`. The sandbox record keeps it, so stop, remove and recovery find the pause
 * wherever the engine that made it put it.
 */
export interface PauseLocation {
  handler: string;
  root: string;
}

/** a container under a pause root, and which one */
export interface LocatedContainer extends RuntimeContainer {
  at: PauseLocation;
}

export interface PauseRuntime {
  /** Builds (once) the pause rootfs from the host's static busybox; returns its absolute path. */
  ensureRootfs(): Promise<string>;
  /** where a pod of this runtime handler ("" = the default) gets its pause */
  locate(handler: string): PauseLocation;
  /** the pause location of every handler (recovery looks under each) */
  locations(): PauseLocation[];
  /**
   * Writes config.json into bundleDir, then starts it under conmon (`<runtime> create` by conmon, then
   * `<runtime> start`) on the runtime of `at`. Returns the pause pid and conmon's. A failure leaves no runtime
   * container and no conmon behind.
   */
  start(
    id: string,
    bundleDir: string,
    spec: unknown,
    opts: { at: PauseLocation; signal?: AbortSignal; report?: RuntimeStepReporter },
  ): Promise<{ pid: number; monitorPid?: number }>;
  /**
   * SIGKILL then wait until its init is gone, and its conmon with it (so the exit file is written). Idempotent: an
   * unknown container is a success.
   */
  stop(id: string, at: PauseLocation, opts?: { signal?: AbortSignal; report?: RuntimeStepReporter }): Promise<void>;
  /** `<runtime> delete --force`. Idempotent. */
  delete(id: string, at: PauseLocation, opts?: { signal?: AbortSignal; report?: RuntimeStepReporter }): Promise<void>;
  /**
   * What conmon wrote when the pause exited (its exit file in the bundle): the code (128+N for signal N) and the
   * finish time; undefined while it runs, or when no conmon watched it (a pause started by an older engine).
   */
  exitInfo(id: string, bundleDir: string): Promise<PauseExitInfo | undefined>;
  /** undefined when the runtime does not know the container */
  state(id: string, at: PauseLocation): Promise<RuntimeState | undefined>;
  /** every container under each handler's pause root, with its OCI annotations (they say which engine owns it) */
  listContainers(): Promise<LocatedContainer[]>;
}
