/**
 * conmon (CRI-O's container monitor, Debian `conmon` 2.1.6) watches every container, the pods' pause containers too
 * (docs/semantics.md#container-monitor).
 *
 * Start: conmon (`--api-version 1`) daemonizes, runs `<runtime> create` with the container's stdio as its own pipes,
 * and says over its sync pipe (`_OCI_SYNCPIPE`, fd 3 here) the container's pid or why create failed
 * (runtime/conmon-start.ts); the engine then runs `<runtime> start`. conmon stays the container's parent (a subreaper), writes each output line in the CRI format
 * to log_path (`-l k8s-file:`), the exit code to `<bundle>/exits/<id>` (`--exit-dir`; its mtime is the finish time),
 * an `oom` file in the bundle (its persist dir) when the OOM killer fires, and reopens the log when `2 0 0` is written
 * to its `ctl` fifo. The container keeps its runtime state (runc and crun alike: created with `create`) until the
 * engine deletes it, so the OOM count of its cgroup is still there when the exit is noticed.
 *
 * Attach is conmon's attach socket (conmon-attach.ts); a tty container gets its terminal from conmon (`-t`: conmon
 * passes the runtime a `--console-socket` and receives the pty's master over it), and resizes go to its `ctl` fifo.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { absoluteExecutable, createUnderConmon, endConmon, readConmonExitFile, readConmonPid } from './conmon-start';
import { reportedStep, runtimeFailure } from './runtime-steps';
import { conmonExecTerminal } from './conmon-exec';
import type { RuntimeStreamIO } from './runc-stream';
import { attachToConmon, CONMON_CTL, writeConmonCtl, type ConmonAttachIO } from './conmon-attach';
import {
  OciContainerRuntime,
  type ContainerExit,
  type ContainerStdio,
  type OciContainerRuntimeOptions,
  type RuntimeStepOptions,
  type StartedContainer,
} from './container-runtime';

export interface ConmonContainerRuntimeOptions extends OciContainerRuntimeOptions {
  /** the conmon binary (default conmon) */
  conmonPath?: string;
}

export class ConmonContainerRuntime extends OciContainerRuntime {
  constructor(private readonly c: ConmonContainerRuntimeOptions) {
    super(c);
  }

  override async start(
    id: string,
    bundleDir: string,
    spec: unknown,
    io: ContainerStdio,
    opts: RuntimeStepOptions = {},
  ): Promise<StartedContainer> {
    const bin = this.c.binary;
    await mkdir(bundleDir, { recursive: true, mode: 0o755 });
    await writeFile(join(bundleDir, 'config.json'), JSON.stringify(spec, null, 2), { mode: 0o644 });
    const conmonPidFile = join(bundleDir, 'conmon.pid');
    try {
      const { pid } = await reportedStep(
        opts.report,
        'conmon.create',
        `conmon: ${bin.handler} create`,
        () => ({ bundle: bundleDir }),
        async () =>
          createUnderConmon({
            conmonPath: this.c.conmonPath,
            id,
            bundleDir,
            runtime: { path: bin.path, handler: bin.handler, root: this.c.root, wrapper: await bin.runWrapper() },
            runtimeLog: join(bundleDir, 'runc.log'),
            pidFile: join(bundleDir, 'container.pid'),
            conmonPidFile,
            exitDir: join(bundleDir, 'exits'),
            logPath: io.logPath || join(bundleDir, 'output.log'),
            extraArgs: [
              ...(io.tty ? ['-t'] : []),
              ...(io.stdin ? ['-i'] : []),
              // a client's end of input closes the container's stdin only for stdin_once without a terminal (containerd's attach)
              ...(io.stdin && !(io.stdinOnce && !io.tty) ? ['--leave-stdin-open'] : []),
            ],
            spec,
            launch: this.c.runner.launchWithSyncPipe?.bind(this.c.runner),
            // not canceled half-way: a `<runtime> create` left running by an abort would create the container after
            // the undo's delete. It takes tens of milliseconds; the cancel is honoured once it answered.
          }),
      );
      if (opts.signal?.aborted) throw new PodscopeError('Canceled', `starting container ${id} was canceled`);
      // conmon wrote its pid file before it answered on the sync pipe: read beside the start
      const [, monitorPid] = await Promise.all([
        this.step('start', ['start', id], opts, (r) => (r.exitCode === 0 ? undefined : runtimeFailure(bin.handler, 'start', r))),
        readConmonPid(conmonPidFile),
      ]);
      return { pid, monitorPid };
    } catch (e) {
      // The caller never learned it existed: no conmon and no runtime container may outlive a failed start. conmon
      // goes first (it would otherwise wait on a created container), then the container, which a failed create or
      // start can leave behind in "created" or "stopped".
      endConmon(await readConmonPid(conmonPidFile));
      await this.delete(id, { report: opts.report }).catch(() => undefined);
      throw e;
    }
  }

  override async exitInfo(bundleDir: string, id?: string): Promise<ContainerExit | undefined> {
    // conmon names the exit file after the container id; an app container's bundle is <runDir>/containers/<id>/bundle
    return readConmonExitFile(join(bundleDir, 'exits', id ?? bundleDir.split('/').at(-2) ?? ''));
  }

  override async reopenLog(monitorPid: number, bundleDir?: string): Promise<void> {
    if (!bundleDir)
      throw new PodscopeError('FailedPrecondition', `the container's conmon (pid ${monitorPid}) has no state dir to be reached through`);
    await writeConmonCtl(bundleDir, CONMON_CTL.reopenLogs, monitorPid);
  }

  override async execStream(id: string, proc: unknown, io: RuntimeStreamIO): Promise<number> {
    // with pipes, the runtime's own exec (runc-stream.ts) has nothing for conmon to do
    if (!io.tty) return super.execStream(id, proc, io);
    return conmonExecTerminal(
      {
        conmonPath: this.c.conmonPath ?? 'conmon',
        runtimePath: await absoluteExecutable(this.c.binary.path),
        handler: this.c.binary.handler,
        root: this.c.root,
      },
      id,
      proc,
      io,
    );
  }

  override attach(_id: string, bundleDir: string, io: ConmonAttachIO): Promise<void> {
    return attachToConmon(bundleDir, io);
  }
}
