/**
 * The host half of the app's interactive sessions: streaming exec/attach, log follow and port-forwards, each owned
 * by the window or socket that opened it (its connection id) and ended when that connection goes away, so no
 * process, file handle or listening port outlives the screen that asked for it. They also end with what they reach:
 * a forward when its pod is stopped or removed (its port would only refuse), an exec or attach when its container
 * exits or is removed, each saying why (stream.exit / portForward.closed carry the reason).
 * Output goes out as events addressed to the owner. Flow control: a session may have STREAM_WINDOW_BYTES of output
 * sent and not yet acknowledged (stream.ack); past that the write callback is held, so the pipe from the process
 * fills and the process blocks, as it would behind a slow terminal. Chunks are at most STREAM_CHUNK_BYTES.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { PodscopeError, notFound, notSupported, serializeError } from '../../shared/domain/errors';
import type { ContainerEvent } from '../../shared/domain/container';
import type { EndpointApi, EndpointDelta } from '../../shared/domain/endpoints';
import type { SandboxEvent } from '../../shared/domain/sandbox';
import type { PushedEvent } from '../../shared/ipc/events';
import {
  MAX_SESSIONS_PER_CONNECTION,
  STREAM_CHUNK_BYTES,
  STREAM_WINDOW_BYTES,
  LOG_BATCH_LINES,
  type LogLine,
  type PortForwardView,
} from '../../shared/domain/streams';
import { openContainerLogReads, type ContainerStreaming, type TerminalSize } from '../engine/api';

/** log lines in flight before the follower waits for an ack */
const LOG_WINDOW_LINES = 5000;

/**
 * runc's words when an exec is asked of a container that is stopping or gone: "cannot exec in a stopped container",
 * or, when its init died a moment earlier, "namespace path: lstat /proc/<pid>/ns/ipc: no such file or directory"
 */
const STOPPED_CONTAINER = /stopped container|container .*(is not running|not found)|namespace path: .*\/proc\/\d+\/ns\//i;

export interface StreamSessionDeps {
  /** the endpoint's streaming, undefined when it has none */
  streaming(endpointId: string): ContainerStreaming | undefined;
  containers(endpointId: string): EndpointApi;
  /** sends an event to one connection */
  emit(event: PushedEvent, owner: string): void;
  /** the pod's name, for the reason a forward ended (undefined when the endpoint cannot say) */
  sandboxName?(endpointId: string, podSandboxId: string): Promise<string | undefined>;
  /** log poll interval (ms), tests shorten it */
  logPollMs?: number;
  /**
   * how long an exec/attach may go on ending by itself after its container exited before it is ended, and how long a
   * forward to a stopped pod waits for the pod's removal to say that instead (ms)
   */
  exitGraceMs?: number;
}

interface Window {
  inflight: number;
  limit: number;
  waiters: Array<() => void>;
}

interface Session {
  id: string;
  owner: string;
  kind: 'exec' | 'attach' | 'logs';
  abort: AbortController;
  window: Window;
  stdin?: PassThrough;
  resize?: Set<(s: TerminalSize) => void>;
  size?: TerminalSize;
  done: Promise<void>;
  endpointId?: string;
  containerId?: string;
  /** filled in after open, from the container's status */
  podSandboxId?: string;
  containerName?: string;
  podName?: string;
  /** why the session is ending, when it is not the process's own doing */
  endReason?: string;
  /** set while the session's end waits for an event to say why (see endReason) */
  onEndReason?: (reason: string) => void;
}

interface Forward {
  view: PortForwardView;
  owner: string;
  server: Server;
  sockets: Set<Socket>;
  abort: AbortController;
  podName?: string;
}

export interface OpenExecRequest {
  endpointId: string;
  containerId: string;
  cmd?: string[];
  tty: boolean;
  stdin: boolean;
  size?: { cols: number; rows: number };
}

export class StreamSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly forwards = new Map<string, Forward>();
  constructor(private readonly deps: StreamSessionDeps) {}

  private need(endpointId: string, what: string): ContainerStreaming {
    const s = this.deps.streaming(endpointId);
    if (!s)
      throw notSupported(
        'streaming',
        `this endpoint does not support ${what}: endpoint ${JSON.stringify(endpointId)} has no streaming (exec, attach, port-forward)`,
        { endpointId },
      );
    return s;
  }

  private checkQuota(owner: string) {
    const n =
      [...this.sessions.values()].filter((s) => s.owner === owner).length +
      [...this.forwards.values()].filter((f) => f.owner === owner).length;
    if (n >= MAX_SESSIONS_PER_CONNECTION)
      throw new PodscopeError('FailedPrecondition', `this window already holds ${n} sessions and forwards; close some first`);
  }

  private own(owner: string, sessionId: string): Session {
    const s = this.sessions.get(sessionId);
    // another connection's session is reported as absent: ids are not a capability to be guessed across windows
    if (!s || s.owner !== owner) throw notFound(`no open session ${sessionId}`);
    return s;
  }

  private static waitWindow(w: Window): Promise<void> {
    if (w.inflight <= w.limit) return Promise.resolve();
    return new Promise((r) => w.waiters.push(r));
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
        void StreamSessions.waitWindow(session.window).then(() => cb());
      },
    });
  }

  private start(owner: string, kind: Session['kind']): Session {
    this.checkQuota(owner);
    const s: Session = {
      id: randomUUID(),
      owner,
      kind,
      abort: new AbortController(),
      window: { inflight: 0, limit: kind === 'logs' ? LOG_WINDOW_LINES : STREAM_WINDOW_BYTES, waiters: [] },
      done: Promise.resolve(),
    };
    this.sessions.set(s.id, s);
    return s;
  }

  private finish(s: Session, result: { exitCode?: number; error?: unknown; reason?: string }) {
    if (!this.sessions.has(s.id)) return;
    this.sessions.delete(s.id);
    s.stdin?.destroy();
    s.resize?.clear();
    this.release(s.window, true);
    const err = result.error === undefined ? undefined : serializeError(result.error);
    this.deps.emit(
      {
        kind: 'stream.exit',
        sessionId: s.id,
        ...(result.exitCode !== undefined && { exitCode: result.exitCode }),
        ...(err && { error: { code: err.code, message: err.message } }),
        ...(result.reason !== undefined && { reason: result.reason }),
      },
      s.owner,
    );
  }

  /**
   * Why an exec/attach ended, when its container went: the reason an event already gave, else the container's
   * state now (a session can end before the event arrives). Undefined while the container runs. A process killed by a
   * signal (exit code 128 and up) while its container still reads as running is usually dying with its container or
   * pod: the event that says so is awaited for a moment, so the reason is not lost to a race with the exit poll.
   */
  private async endReason(s: Session, exitCode?: number): Promise<string | undefined> {
    const now = await this.endReasonNow(s);
    if (now !== undefined || exitCode === undefined || exitCode < 128 || !s.containerId) return now;
    return new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(s.endReason), 2 * (this.deps.exitGraceMs ?? 1000));
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
    const timeout = new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000).unref());
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
    for (const s of this.sessions.values()) {
      if (s.kind === 'logs' || !match(s) || s.endReason !== undefined) continue;
      s.endReason = typeof reason === 'string' ? reason : reason(s);
      s.onEndReason?.(s.endReason);
      // an exec'd process dies with its container and an attach ends with its stdio: let them say so themselves
      // (an exec's exit code), and end what is still open after the grace
      const timer = setTimeout(() => {
        if (this.sessions.has(s.id)) s.abort.abort();
      }, graceMs);
      timer.unref();
    }
  }

  private async endForward(f: Forward, reason: string) {
    if (!this.forwards.has(f.view.id)) return;
    await this.closeForward(f.owner, f.view.id);
    this.deps.emit({ kind: 'portForward.closed', id: f.view.id, reason }, f.owner);
  }

  /**
   * An endpoint's pod or container changed: forwards to a pod that is stopped or removed end (nothing could connect
   * through them any more, and a listening port would say otherwise); exec/attach sessions end with their container.
   */
  notify(endpointId: string, event: SandboxEvent | ContainerEvent) {
    const grace = this.deps.exitGraceMs ?? 1000;
    const pod = (id: string) => (f: Forward) => f.view.endpointId === endpointId && f.view.podSandboxId === id;
    const podName = (f: Forward, id: string) => f.podName ?? id.slice(0, 13);
    switch (event.type) {
      case 'sandbox.removed':
        for (const f of [...this.forwards.values()].filter(pod(event.id)))
          void this.endForward(f, `pod ${podName(f, event.id)} was removed`);
        this.endContainerSessions(
          (s) => s.endpointId === endpointId && s.podSandboxId === event.id,
          (s) => `pod ${s.podName ?? event.id.slice(0, 13)} was removed`,
          0,
        );
        break;
      case 'sandbox.changed':
        if (event.summary.state !== 'SANDBOX_NOTREADY') break;
        // a remove stops a running pod first: wait a moment so that one says "removed", not "stopped"
        for (const f of [...this.forwards.values()].filter(pod(event.id)))
          setTimeout(
            () => void this.endForward(f, `pod ${event.summary.metadata.name} was stopped`),
            this.deps.exitGraceMs ?? 1000,
          ).unref();
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
            grace,
          );
        break;
      default:
        break;
    }
  }

  /** The same for an endpoint that reports its rows as deltas (a CRI runtime's list follower). */
  notifyDelta(endpointId: string, delta: EndpointDelta) {
    for (const id of delta.pods?.removed ?? []) this.notify(endpointId, { type: 'sandbox.removed', id });
    for (const summary of delta.pods?.upserts ?? []) this.notify(endpointId, { type: 'sandbox.changed', id: summary.id, summary });
    for (const id of delta.containers?.removed ?? []) this.notify(endpointId, { type: 'container.removed', id, podSandboxId: '' });
    for (const summary of delta.containers?.upserts ?? []) this.notify(endpointId, { type: 'container.changed', id: summary.id, summary });
  }

  private release(w: Window, all = false) {
    if (!all && w.inflight > w.limit) return;
    const waiters = w.waiters.splice(0);
    for (const r of waiters) r();
  }

  /** exec (cmd given) or attach (no cmd) */
  open(owner: string, req: OpenExecRequest): { sessionId: string } {
    const streaming = this.need(req.endpointId, req.cmd ? 'exec' : 'attach');
    const s = this.start(owner, req.cmd ? 'exec' : 'attach');
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
      async (r) => this.finish(s, { ...r, reason: await this.endReason(s, r.exitCode) }),
      // an exec that could not start because its container was stopping ("cannot exec in a stopped container") is
      // ending with its container as much as a killed one
      async (error) => this.finish(s, { error, reason: await this.endReason(s, STOPPED_CONTAINER.test(String(error)) ? 128 : undefined) }),
    );
    return { sessionId: s.id };
  }

  write(owner: string, sessionId: string, data: Buffer) {
    const s = this.own(owner, sessionId);
    if (!s.stdin) throw new PodscopeError('FailedPrecondition', 'this session was opened without stdin');
    if (!s.stdin.writableEnded) s.stdin.write(data);
  }

  closeStdin(owner: string, sessionId: string) {
    const s = this.own(owner, sessionId);
    s.stdin?.end();
  }

  resize(owner: string, sessionId: string, size: { cols: number; rows: number }) {
    const s = this.own(owner, sessionId);
    s.size = { width: size.cols, height: size.rows };
    for (const l of s.resize ?? []) l(s.size);
  }

  ack(owner: string, sessionId: string, n: number) {
    const s = this.sessions.get(sessionId);
    // acks may arrive after the session ended: not an error
    if (!s || s.owner !== owner) return;
    s.window.inflight = Math.max(0, s.window.inflight - n);
    this.release(s.window);
  }

  async close(owner: string, sessionId: string) {
    const s = this.sessions.get(sessionId);
    if (!s || s.owner !== owner) return;
    s.abort.abort();
    this.release(s.window, true);
    await s.done;
  }

  async followLogs(
    owner: string,
    req: { endpointId: string; containerId: string; tail: number; follow: boolean },
  ): Promise<{ sessionId: string; logPath: string }> {
    const api = this.deps.containers(req.endpointId);
    const status = await api.containerStatus(req.containerId);
    if (!status.logPath)
      throw new PodscopeError(
        'FailedPrecondition',
        `container ${status.metadata.name} has no log file: its pod has no log_directory or the container no log_path`,
      );
    const s = this.start(owner, 'logs');
    const onLines = async (lines: LogLine[]) => {
      if (s.abort.signal.aborted) return;
      s.window.inflight += lines.length;
      this.deps.emit({ kind: 'logs.lines', sessionId: s.id, lines }, s.owner);
      await StreamSessions.waitWindow(s.window);
    };
    const containerId = status.id;
    // the engine's CRI log reader (rotation, P records, tail from the end) works on any runtime's file on this host;
    // a follow ends once the container has exited and its file is drained, like crictl logs -f
    const live = async () => {
      const st = await api.containerStatus!(containerId);
      return st.state === 'CONTAINER_CREATED' || st.state === 'CONTAINER_RUNNING';
    };
    const reads = await openContainerLogReads(
      status.logPath,
      {
        tail: req.tail,
        follow: req.follow,
        signal: s.abort.signal,
        ...(this.deps.logPollMs !== undefined && { pollMs: this.deps.logPollMs }),
      },
      live,
    );
    s.done = sendInBatches(reads, onLines, s.abort.signal).then(
      () => this.finish(s, {}),
      (error) => this.finish(s, { error }),
    );
    return { sessionId: s.id, logPath: status.logPath };
  }

  async openForward(
    owner: string,
    req: { endpointId: string; podSandboxId: string; port: number; hostPort: number },
  ): Promise<PortForwardView> {
    const streaming = this.need(req.endpointId, 'port-forward');
    this.checkQuota(owner);
    const abort = new AbortController();
    const sockets = new Set<Socket>();
    const server = createServer();
    const id = randomUUID();
    const view: PortForwardView = {
      id,
      endpointId: req.endpointId,
      podSandboxId: req.podSandboxId,
      port: req.port,
      hostAddress: '127.0.0.1',
      hostPort: 0,
      connections: 0,
    };
    server.on('connection', (socket) => {
      sockets.add(socket);
      view.connections++;
      socket.on('error', () => socket.destroy());
      streaming
        .portForward({ sandboxId: req.podSandboxId, port: req.port, stream: socket, signal: abort.signal })
        .catch(() => {
          // the pod's port refused or the pod is gone: the client sees its connection closed, like kubectl's
        })
        .finally(() => {
          socket.destroy();
          sockets.delete(socket);
        });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) =>
        reject(
          e.code === 'EADDRINUSE'
            ? new PodscopeError('AlreadyExists', `host port ${req.hostPort} is in use on 127.0.0.1`, { details: { field: 'hostPort' } })
            : e,
        ),
      );
      // loopback only: a forward must not open the pod to the network
      server.listen(req.hostPort, '127.0.0.1', () => resolve());
    });
    view.hostPort = (server.address() as AddressInfo).port;
    const forward: Forward = { view, owner, server, sockets, abort };
    this.forwards.set(id, forward);
    void this.deps.sandboxName?.(req.endpointId, req.podSandboxId).then(
      (name) => (forward.podName = name),
      () => undefined,
    );
    return { ...view };
  }

  async closeForward(owner: string, id: string) {
    const f = this.forwards.get(id);
    if (!f || f.owner !== owner) return;
    this.forwards.delete(id);
    f.abort.abort();
    for (const s of f.sockets) s.destroy();
    await new Promise<void>((r) => f.server.close(() => r()));
  }

  listForwards(owner: string): PortForwardView[] {
    return [...this.forwards.values()].filter((f) => f.owner === owner).map((f) => ({ ...f.view }));
  }

  /** the window or socket went away: end everything it held */
  async closeOwner(owner: string) {
    await Promise.all([
      ...[...this.sessions.values()].filter((s) => s.owner === owner).map((s) => this.close(owner, s.id)),
      ...[...this.forwards.values()].filter((f) => f.owner === owner).map((f) => this.closeForward(owner, f.view.id)),
    ]);
  }

  async closeAll() {
    const owners = new Set([...[...this.sessions.values()].map((s) => s.owner), ...[...this.forwards.values()].map((f) => f.owner)]);
    await Promise.all([...owners].map((o) => this.closeOwner(o)));
  }

  /** open sessions and forwards (tests check nothing is left) */
  counts(owner?: string): { sessions: number; forwards: number } {
    const mine = <T extends { owner: string }>(x: T) => owner === undefined || x.owner === owner;
    return { sessions: [...this.sessions.values()].filter(mine).length, forwards: [...this.forwards.values()].filter(mine).length };
  }
}

/** Sends each read's lines in batches of at most LOG_BATCH_LINES, waiting for the receiver between batches. */
async function sendInBatches(reads: AsyncGenerator<LogLine[]>, onLines: (lines: LogLine[]) => Promise<void>, signal: AbortSignal) {
  try {
    for await (const lines of reads) {
      for (let i = 0; i < lines.length && !signal.aborted; i += LOG_BATCH_LINES) await onLines(lines.slice(i, i + LOG_BATCH_LINES));
      if (signal.aborted) break;
    }
  } finally {
    await reads.return(undefined);
  }
}
