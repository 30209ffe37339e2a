/**
 * The pause container, on the runtime of its pod's handler (runc or crun), through the same runtime implementation as
 * the app containers (runtime/container-runtime.ts, runtime/conmon.ts): containerd and CRI-O run the sandbox container
 * on the pod's runtime too (docs/semantics.md#runtime-handlers). What is the pause's own is here: its rootfs
 * (pause-rootfs.ts), its log, and its roots (`<runDir>/<handler>`, apart from the app containers').
 *
 * conmon watches it as every app container (docs/semantics.md#container-monitor; CRI-O runs its infra container the
 * same way) and writes its exit code to `<bundle>/exits/<id>` (its mtime is the finish time), which the engine cannot
 * learn otherwise (it is no subreaper). The pause writes nothing, but conmon needs a log: `<bundle>/pause.log`.
 */
import { join } from 'node:path';
import type { OciContainerRuntime } from './container-runtime';
import { readConmonExitFile } from './conmon-start';
import { pauseRuntimeRoot, resolveRuntimeHandler, RUNTIME_HANDLERS, type RuntimeHandlerName } from './oci-runtime';
import { ensurePauseRootfs } from './pause-rootfs';
import type { LocatedContainer, PauseExitInfo, PauseLocation, PauseRuntime, RuntimeState, RuntimeStepReporter } from './types';

export interface OciPauseRuntimeOptions {
  /** the engine's run dir: each handler's pauses live under `<runDir>/<handler>` */
  runDir: string;
  /** the runtime of a handler under a root (index.ts: the app containers' ConmonContainerRuntime, on another root) */
  runtimeAt(handler: RuntimeHandlerName, root: string): OciContainerRuntime;
  /** where ensureRootfs() builds the pause tree, e.g. `<stateDir>/pause/rootfs` */
  rootfsDir: string;
  busyboxPath?: string;
  /** how long stop() waits for the container's init (and its conmon) to be gone after SIGKILL (default 10 s) */
  stopTimeoutMs?: number;
}

interface StepOptions {
  signal?: AbortSignal;
  report?: RuntimeStepReporter;
}

export class OciPauseRuntime implements PauseRuntime {
  private readonly runtimes = new Map<string, OciContainerRuntime>();
  private rootfs: Promise<string> | undefined;

  constructor(private readonly options: OciPauseRuntimeOptions) {}

  ensureRootfs(): Promise<string> {
    this.rootfs ??= ensurePauseRootfs({ rootfsDir: this.options.rootfsDir, busyboxPath: this.options.busyboxPath }).catch((e: unknown) => {
      this.rootfs = undefined;
      throw e;
    });
    return this.rootfs;
  }

  locate(handler: string): PauseLocation {
    const h = resolveRuntimeHandler(handler);
    return { handler: h, root: pauseRuntimeRoot(this.options.runDir, h) };
  }

  locations(): PauseLocation[] {
    return RUNTIME_HANDLERS.map((h) => this.locate(h));
  }

  async start(
    id: string,
    bundleDir: string,
    spec: unknown,
    opts: StepOptions & { at: PauseLocation },
  ): Promise<{ pid: number; monitorPid: number }> {
    return this.runtime(opts.at).start(id, bundleDir, spec, { logPath: join(bundleDir, 'pause.log') }, opts);
  }

  async exitInfo(id: string, bundleDir: string): Promise<PauseExitInfo | undefined> {
    return readConmonExitFile(join(bundleDir, 'exits', id));
  }

  stop(id: string, at: PauseLocation, opts: StepOptions = {}): Promise<void> {
    return this.runtime(at).stop(id, { ...opts, timeoutMs: this.options.stopTimeoutMs });
  }

  delete(id: string, at: PauseLocation, opts: StepOptions = {}): Promise<void> {
    return this.runtime(at).delete(id, opts);
  }

  state(id: string, at: PauseLocation): Promise<RuntimeState | undefined> {
    return this.runtime(at).state(id);
  }

  async listContainers(): Promise<LocatedContainer[]> {
    const lists = await Promise.all(
      this.locations().map(async (at) => (await this.runtime(at).listContainers()).map((c) => ({ ...c, at }))),
    );
    return lists.flat();
  }

  /** the runtime of a location, one per handler and root (a record may name a root this engine no longer uses) */
  private runtime(at: PauseLocation): OciContainerRuntime {
    const handler = resolveRuntimeHandler(at.handler);
    const key = `${handler}\0${at.root}`;
    let r = this.runtimes.get(key);
    if (!r) {
      r = this.options.runtimeAt(handler, at.root);
      this.runtimes.set(key, r);
    }
    return r;
  }
}
