/**
 * Streaming exec and attach: a process's stdio as `stream.data` events in chunks of at most STREAM_CHUNK_BYTES under
 * the session's flow window, stdin and terminal resizes from the window, and an end that says why when the
 * container went (exited, removed, its pod removed) rather than the process's own doing.
 */
import { PassThrough, Writable } from 'node:stream';
import type { ContainerEvent } from '../../../shared/domain/container';
import type { EndpointApi } from '../../../shared/domain/endpoints';
import { PodscopeError } from '../../../shared/domain/errors';
import type { SandboxEvent } from '../../../shared/domain/sandbox';
import { STREAM_CHUNK_BYTES } from '../../../shared/domain/streams';
import type { PushedEvent } from '../../../shared/ipc/events';
import type { ContainerStreaming, TerminalSize } from '../../engine/api';
import { waitWindow, type Session, type SessionTable } from './session-table';

/**
 * runc's words when an exec is asked of a container that is stopping or gone: "cannot exec in a stopped container",
 * or, when its init died a moment earlier, "namespace path: lstat /proc/<pid>/ns/ipc: no such file or directory"
 */
/** How long an ending session waits for its container's state, and for the event that says why it went. */
const STATUS_WAIT_MS = 3000;
const END_EVENT_WAIT_MS = 4000;
const STOPPED_CONTAINER = /stopped container|container .*(is not running|not found)|namespace path: .*\/proc\/\d+\/ns\//i;

export interface OpenExecRequest {
  endpointId: string;
  containerId: string;
  cmd?: string[];
  tty: boolean;
  stdin: boolean;
  size?: { cols: number; rows: number };
}

export interface TerminalSessionDeps {
  containers(endpointId: string): EndpointApi;
  emit(event: PushedEvent, owner: string): void;
  sandboxName?(endpointId: string, podSandboxId: string): Promise<string | undefined>;
  exitGraceMs?: number;
}

export class TerminalSessions {
  constructor(
    private readonly table: SessionTable,
    private readonly deps: TerminalSessionDeps,
  ) {}

  /** exec (cmd given) or attach (no cmd) */
  open(owner: string, req: OpenExecRequest, streaming: ContainerStreaming): { sessionId: string } {
    const s = this.table.start(owner, req.cmd ? 'exec' : 'attach');
    s.endpointId = req.endpointId;
    s.containerId = req.containerId;
    // the pod and the name, so the pod's removal ends this session and the reason names the container
    void this.deps
      .containers(req.endpointId)
      .containerStatus?.(req.containerId)
      .then(
        async (st) => {
          s.podSandboxId = st.podSandboxId;
          s.containerName = st.metadata.name;
          s.podName = await this.deps.sandboxName?.(req.endpointId, st.podSandboxId);
        },
        () => undefined,
      );
    s.stdin = req.stdin ? new PassThrough() : undefined;
    s.resize = new Set();
    if (req.size) s.size = { width: req.size.cols, height: req.size.rows };
    const io = {
      stdin: s.stdin ?? null,
      stdout: this.output(s, 'stdout'),
      stderr: req.tty ? null : this.output(s, 'stderr'),
      tty: req.tty,
      signal: s.abort.signal,
      ...(req.tty && {
        resize: {
          subscribe: (l: (size: TerminalSize) => void) => {
            s.resize?.add(l);
            // the size the terminal has now, as remotecommand's first resize message
            if (s.size) l(s.size);
            return () => s.resize?.delete(l);
          },
        },
      }),
    };
    const run: Promise<{ exitCode?: number }> = req.cmd
      ? streaming.exec({ ...io, containerId: req.containerId, cmd: req.cmd }).then((r) => ({ exitCode: r.exitCode }))
      : streaming.attach({ ...io, containerId: req.containerId }).then(() => ({}));
    s.done = run.then(
      async (r) => this.table.finish(s, { ...r, reason: await this.endReason(s, r.exitCode) }),
      // an exec that could not start because its container was stopping ("cannot exec in a stopped container") is
      // ending with its container as much as a killed one
      async (error) =>
        this.table.finish(s, { error, reason: await this.endReason(s, STOPPED_CONTAINER.test(String(error)) ? 128 : undefined) }),
    );
    return { sessionId: s.id };
  }

  write(owner: string, sessionId: string, data: Buffer): void {
    const s = this.table.own(owner, sessionId);
    if (!s.stdin) throw new PodscopeError('FailedPrecondition', 'this session was opened without stdin');
    if (!s.stdin.writableEnded) s.stdin.write(data);
  }

  closeStdin(owner: string, sessionId: string): void {
    const s = this.table.own(owner, sessionId);
    s.stdin?.end();
  }

  resize(owner: string, sessionId: string, size: { cols: number; rows: number }): void {
    const s = this.table.own(owner, sessionId);
    s.size = { width: size.cols, height: size.rows };
    for (const l of s.resize ?? []) l(s.size);
  }

  /** A pod or container changed: sessions on a removed pod or container end now, on an exited one after a grace. */
  notify(endpointId: string, event: SandboxEvent | ContainerEvent): void {
    switch (event.type) {
      case 'sandbox.removed':
        this.endContainerSessions(
          (s) => s.endpointId === endpointId && s.podSandboxId === event.id,
          (s) => `pod ${s.podName ?? event.id.slice(0, 13)} was removed`,
          0,
        );
        break;
      case 'container.removed':
        this.endContainerSessions(
          (s) => s.endpointId === endpointId && s.containerId === event.id,
          (s) => `container ${s.containerName ?? event.id.slice(0, 13)} was removed`,
          0,
        );
        break;
      case 'container.changed':
        if (event.summary.state === 'CONTAINER_EXITED')
          this.endContainerSessions(
            (s) => s.endpointId === endpointId && s.containerId === event.id,
            `container ${event.summary.metadata.name} exited`,
            this.deps.exitGraceMs ?? 1000,
          );
        break;
      default:
        break;
    }
  }

  private output(session: Session, stream: 'stdout' | 'stderr'): Writable {
    return new Writable({
      write: (chunk: Buffer, _enc, cb) => {
        if (session.abort.signal.aborted) return cb();
        for (let i = 0; i < chunk.length; i += STREAM_CHUNK_BYTES) {
          const piece = chunk.subarray(i, i + STREAM_CHUNK_BYTES);
          session.window.inflight += piece.length;
          this.deps.emit({ kind: 'stream.data', sessionId: session.id, stream, data: piece.toString('base64') }, session.owner);
        }
        void waitWindow(session.window).then(() => cb());
      },
    });
  }

  /**
   * Why an exec/attach ended, when its container went: the reason an event already gave, else the container's
   * state now (a session can end before the event arrives). Undefined while the container runs. A process killed by a
   * signal (exit code 128 and up), or an exec whose end the runtime could not report (an error, no exit code: its
   * process went with the container before the code was read, seen under load in sessions-end-real), while its
   * container still reads as running is usually dying with its container or pod: the event that says so is awaited
   * for a moment, so the reason is not lost to a race with the exit poll. A session the user closed ends for that.
   * "A moment" is seconds, not the exit grace alone: on a loaded machine (a CI run at load 6–15 on 2 cores) the
   * container event came after 2 s, and the session ended with no reason at all; a process someone killed inside a
   * running container only shows its end that much later.
   */
  private async endReason(s: Session, exitCode?: number): Promise<string | undefined> {
    const now = await this.endReasonNow(s);
    // an exit code below 128 is the process's own end
    if (now !== undefined || (exitCode !== undefined && exitCode < 128) || s.abort.signal.aborted || !s.containerId) return now;
    return new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(s.endReason), Math.max(END_EVENT_WAIT_MS, 2 * (this.deps.exitGraceMs ?? 1000)));
      timer.unref();
      s.onEndReason = (reason) => {
        clearTimeout(timer);
        resolve(reason);
      };
    });
  }

  private async endReasonNow(s: Session): Promise<string | undefined> {
    if (s.endReason !== undefined || !s.endpointId || !s.containerId) return s.endReason;
    const api = this.deps.containers(s.endpointId);
    if (!api.containerStatus) return undefined;
    const name = () => s.containerName ?? s.containerId!.slice(0, 13);
    const timeout = new Promise<undefined>((r) => setTimeout(() => r(undefined), STATUS_WAIT_MS).unref());
    const now = Promise.resolve()
      .then(() => api.containerStatus!(s.containerId!))
      .then(
        (st) => (st.state === 'CONTAINER_EXITED' ? `container ${st.metadata.name} exited` : undefined),
        (e: unknown) => (e instanceof PodscopeError && e.code === 'NotFound' ? `container ${name()} was removed` : undefined),
      );
    return Promise.race([now, timeout]);
  }

  /** Marks the sessions on a container (or on every container of a pod) as ending for `reason` and ends them. */
  private endContainerSessions(match: (s: Session) => boolean, reason: string | ((s: Session) => string), graceMs: number) {
    for (const s of this.table.sessions.values()) {
      if (s.kind === 'logs' || !match(s) || s.endReason !== undefined) continue;
      s.endReason = typeof reason === 'string' ? reason : reason(s);
      s.onEndReason?.(s.endReason);
      // an exec'd process dies with its container and an attach ends with its stdio: let them say so themselves
      // (an exec's exit code), and end what is still open after the grace
      const timer = setTimeout(() => {
        if (this.table.sessions.has(s.id)) s.abort.abort();
      }, graceMs);
      timer.unref();
    }
  }
}
