/**
 * The host half of the app's interactive sessions: streaming exec/attach, log follow and port-forwards, each owned
 * by the window or socket that opened it (its connection id) and ended when that connection goes away, so no
 * process, file handle or listening port outlives the screen that asked for it. They also end with what they reach:
 * a forward when its pod is stopped or removed (its port would only refuse), an exec or attach when its container
 * exits or is removed, each saying why (stream.exit / portForward.closed carry the reason).
 *
 * One kind per file under sessions/: terminal-sessions.ts (exec, attach), log-sessions.ts (log follow),
 * port-forwards.ts; session-table.ts holds what the streaming kinds share (ids, owners, flow control, the end).
 * This class is the one door: the per-window quota across kinds, the endpoint's streaming, and the events of pods
 * and containers handed to each kind.
 */
import type { ContainerEvent } from '../../shared/domain/container';
import type { EndpointApi, EndpointDelta } from '../../shared/domain/endpoints';
import { PodscopeError, notSupported } from '../../shared/domain/errors';
import type { SandboxEvent } from '../../shared/domain/sandbox';
import { MAX_SESSIONS_PER_CONNECTION, type PortForwardView } from '../../shared/domain/streams';
import type { PushedEvent } from '../../shared/ipc/events';
import type { ContainerStreaming } from '../engine/api';
import { followLogs } from './sessions/log-sessions';
import { PortForwards } from './sessions/port-forwards';
import { SessionTable } from './sessions/session-table';
import { TerminalSessions, type OpenExecRequest } from './sessions/terminal-sessions';

export type { OpenExecRequest };

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

export class StreamSessions {
  private readonly table: SessionTable;
  private readonly terminals: TerminalSessions;
  private readonly forwards: PortForwards;

  constructor(private readonly deps: StreamSessionDeps) {
    this.table = new SessionTable(deps.emit, (owner) => this.checkQuota(owner));
    this.terminals = new TerminalSessions(this.table, deps);
    this.forwards = new PortForwards(deps);
  }

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
    const n = this.table.ofOwner(owner).length + this.forwards.ofOwner(owner).length;
    if (n >= MAX_SESSIONS_PER_CONNECTION)
      throw new PodscopeError('FailedPrecondition', `this window already holds ${n} sessions and forwards; close some first`);
  }

  /**
   * An endpoint's pod or container changed: forwards to a pod that is stopped or removed end (nothing could connect
   * through them any more, and a listening port would say otherwise); exec/attach sessions end with their container.
   */
  notify(endpointId: string, event: SandboxEvent | ContainerEvent) {
    this.forwards.notify(endpointId, event);
    this.terminals.notify(endpointId, event);
  }

  /** The same for an endpoint that reports its rows as deltas (a CRI runtime's list follower). */
  notifyDelta(endpointId: string, delta: EndpointDelta) {
    for (const id of delta.pods?.removed ?? []) this.notify(endpointId, { type: 'sandbox.removed', id });
    for (const summary of delta.pods?.upserts ?? []) this.notify(endpointId, { type: 'sandbox.changed', id: summary.id, summary });
    for (const id of delta.containers?.removed ?? []) this.notify(endpointId, { type: 'container.removed', id, podSandboxId: '' });
    for (const summary of delta.containers?.upserts ?? []) this.notify(endpointId, { type: 'container.changed', id: summary.id, summary });
  }

  /** exec (cmd given) or attach (no cmd) */
  open(owner: string, req: OpenExecRequest): { sessionId: string } {
    const streaming = this.need(req.endpointId, req.cmd ? 'exec' : 'attach');
    return this.terminals.open(owner, req, streaming);
  }

  write(owner: string, sessionId: string, data: Buffer) {
    this.terminals.write(owner, sessionId, data);
  }

  closeStdin(owner: string, sessionId: string) {
    this.terminals.closeStdin(owner, sessionId);
  }

  resize(owner: string, sessionId: string, size: { cols: number; rows: number }) {
    this.terminals.resize(owner, sessionId, size);
  }

  ack(owner: string, sessionId: string, n: number) {
    this.table.ack(owner, sessionId, n);
  }

  async close(owner: string, sessionId: string) {
    await this.table.close(owner, sessionId);
  }

  followLogs(
    owner: string,
    req: { endpointId: string; containerId: string; tail: number; follow: boolean },
  ): Promise<{ sessionId: string; logPath: string }> {
    return followLogs(this.table, this.deps, owner, req);
  }

  async openForward(
    owner: string,
    req: { endpointId: string; podSandboxId: string; port: number; hostPort: number },
  ): Promise<PortForwardView> {
    const streaming = this.need(req.endpointId, 'port-forward');
    this.checkQuota(owner);
    return this.forwards.open(owner, req, streaming);
  }

  async closeForward(owner: string, id: string) {
    await this.forwards.close(owner, id);
  }

  listForwards(owner: string): PortForwardView[] {
    return this.forwards.list(owner);
  }

  /** the window or socket went away: end everything it held */
  async closeOwner(owner: string) {
    await Promise.all([
      ...this.table.ofOwner(owner).map((s) => this.close(owner, s.id)),
      ...this.forwards.ofOwner(owner).map((f) => this.closeForward(owner, f.view.id)),
    ]);
  }

  async closeAll() {
    const owners = new Set([...this.table.ofOwner().map((s) => s.owner), ...this.forwards.ofOwner().map((f) => f.owner)]);
    await Promise.all([...owners].map((o) => this.closeOwner(o)));
  }

  /** open sessions and forwards (tests check nothing is left) */
  counts(owner?: string): { sessions: number; forwards: number } {
    return { sessions: this.table.ofOwner(owner).length, forwards: this.forwards.ofOwner(owner).length };
  }
}
