/** The pause container, run by an OCI runtime (runc) under the engine's own --root. */
import type { StepReport } from '../step-report';

export interface PauseState {
  id: string;
  pid: number;
  /** runc status: creating | created | running | paused | stopped */
  status: string;
  bundle: string;
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
  /** Writes config.json into bundleDir, then starts it detached (`runc run --detach`). Returns the pause pid. */
  start(
    id: string,
    bundleDir: string,
    spec: unknown,
    opts: { signal?: AbortSignal; report?: RuntimeStepReporter },
  ): Promise<{ pid: number }>;
  /** SIGKILL then wait until runc reports it stopped. Idempotent: an unknown container is a success. */
  stop(id: string, opts?: { signal?: AbortSignal; report?: RuntimeStepReporter }): Promise<void>;
  /** `runc delete --force`. Idempotent. */
  delete(id: string, opts?: { signal?: AbortSignal; report?: RuntimeStepReporter }): Promise<void>;
  /** undefined when runc does not know the container */
  state(id: string): Promise<PauseState | undefined>;
  /** ids of every container under the engine's runc root */
  list(): Promise<string[]>;
  /** every container under the runc root with its OCI annotations (they say which engine owns it) */
  listContainers(): Promise<RuntimeContainer[]>;
}
