/**
 * The engine's ContainerStreaming (streaming.ts; docs/semantics.md#streaming) and its log reader: the checks made before a session
 * (internal/cri/server/container_exec.go, container_attach.go, sandbox_portforward.go), then the runtime does the OS
 * part (runc-stream.ts for runc, the fake in tests).
 */
import { isHostNetwork } from '../../../shared/domain/config';
import type { LogEntry } from '../../../shared/domain/cri-log';
import { PodscopeError } from '../../../shared/domain/errors';
import type { ContainerOciSpec } from '../runtime/container-spec';
import { runtimeFor, type ContainerContext } from './context';
import { observeExit } from './exit';
import { openContainerLog, type ContainerLogOptions } from './log-reader';
import type { ContainerRecord } from './record';
import type {
  AttachRequest,
  ContainerStreaming,
  ExecStreamRequest,
  ExecStreamResult,
  PortForwardRequest,
  ResizeSource,
  TerminalSize,
} from './streaming';
import { toCriContainerState } from './view';

/**
 * Subscribes to a resize source at once (the session starts after awaits, and a client sends its first size right
 * away) and replays the latest size to the runtime when it subscribes; `close` unsubscribes from the source.
 */
function latchResize(source: ResizeSource | undefined): { resize: ResizeSource | undefined; close(): void } {
  if (!source) return { resize: undefined, close: () => undefined };
  let last: TerminalSize | undefined;
  const listeners = new Set<(s: TerminalSize) => void>();
  const off = source.subscribe((s) => {
    last = s;
    for (const l of listeners) l(s);
  });
  return {
    resize: {
      subscribe(l) {
        listeners.add(l);
        if (last) l(last);
        return () => void listeners.delete(l);
      },
    },
    close: off,
  };
}

/** NotFound for an unknown id, FailedPrecondition unless it runs (the exec/attach check of containerd) */
async function runningContainer(ctx: ContainerContext, idOrPrefix: string): Promise<ContainerRecord> {
  const rec = ctx.store.get(idOrPrefix);
  if (rec.state === 'Running') await ctx.locks.tryRun(rec.id, () => observeExit(ctx, rec));
  if (rec.state !== 'Running')
    throw new PodscopeError('FailedPrecondition', `container ${JSON.stringify(rec.id)} is in ${toCriContainerState(rec.state)} state`);
  return rec;
}

export class EngineStreaming implements ContainerStreaming {
  constructor(private readonly ctx: ContainerContext) {}

  /**
   * The container's own process spec with args and terminal replaced, as containerd's exec (user, env, cwd,
   * capabilities, rlimits, apparmor, no_new_privs stay the container's).
   */
  async exec(req: ExecStreamRequest): Promise<ExecStreamResult> {
    const latch = latchResize(req.tty ? req.resize : undefined);
    try {
      if (req.cmd.length === 0) throw new PodscopeError('InvalidArgument', 'cmd must not be empty');
      const rec = await runningContainer(this.ctx, req.containerId);
      const spec = rec.ociSpec as ContainerOciSpec;
      const proc = { ...spec.process, args: [...req.cmd], terminal: req.tty };
      // a terminal is one stream: stderr is unused (kubelet's remotecommand merges it into stdout)
      const io = { ...req, resize: latch.resize, stderr: req.tty ? null : req.stderr };
      return { exitCode: await runtimeFor(this.ctx, rec.runtimeHandler).execStream(rec.id, proc, io) };
    } finally {
      latch.close();
    }
  }

  /**
   * The container's stdio; tty is the container's (CreateContainer decided it), not the request's. Input to a
   * container created without stdin is dropped, as containerd's attach ignores it (internal/cri/io/container_io.go:
   * stdin is only copied when the container has one).
   */
  async attach(req: AttachRequest): Promise<void> {
    const latch = latchResize(req.resize);
    try {
      const rec = await runningContainer(this.ctx, req.containerId);
      const tty = rec.config.tty;
      await runtimeFor(this.ctx, rec.runtimeHandler).attach(rec.id, rec.bundleDir, {
        ...req,
        stdin: rec.config.stdin ? req.stdin : null,
        stdinOnce: rec.config.stdin_once,
        tty,
        stderr: tty ? null : req.stderr,
        resize: tty ? latch.resize : undefined,
      });
    } finally {
      latch.close();
    }
  }

  /** localhost:<port> in the pod's netns (the host's for a host-network pod), as containerd's portForward. */
  async portForward(req: PortForwardRequest): Promise<void> {
    if (!Number.isInteger(req.port) || req.port < 1 || req.port > 65535)
      throw new PodscopeError('InvalidArgument', `port ${req.port} is not a TCP port (1-65535)`);
    if (req.sandboxId === '') throw new PodscopeError('InvalidArgument', 'pod_sandbox_id must not be empty');
    const sandbox = this.ctx.pods.get(req.sandboxId);
    if (sandbox.state !== 'Ready')
      throw new PodscopeError('FailedPrecondition', `sandbox ${JSON.stringify(sandbox.id)} is not ready (state ${sandbox.state})`);
    const hostNet = isHostNetwork(sandbox.config);
    if (!hostNet && (!sandbox.netnsPath || sandbox.netnsClosed))
      throw new PodscopeError('FailedPrecondition', `network namespace for sandbox ${JSON.stringify(sandbox.id)} is closed`);
    await this.ctx.runtime.dial(hostNet ? undefined : sandbox.netnsPath, req.port, req.stream, req.signal);
  }
}

/** `crictl logs`: the container's CRI log file, read (and followed until the container exits) by log-reader.ts */
export async function containerLogs(
  ctx: ContainerContext,
  idOrPrefix: string,
  opts: ContainerLogOptions,
): Promise<AsyncIterable<LogEntry>> {
  const rec = ctx.store.get(idOrPrefix);
  if (!rec.logPath)
    throw new PodscopeError(
      'FailedPrecondition',
      `container ${rec.id} has no log file (its pod has no log_directory or its config no log_path)`,
    );
  const isRunning = async () => {
    if (rec.state === 'Running') await ctx.locks.tryRun(rec.id, () => observeExit(ctx, rec));
    return rec.state === 'Running';
  };
  return openContainerLog(rec.logPath, opts, isRunning);
}
