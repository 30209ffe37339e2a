/**
 * The open sessions of every kind that streams output to a window (exec, attach, log follow): ids, owners, the flow
 * control window, and the one `stream.exit` each ends with. Output goes out as events addressed to the owner; a
 * session may have its window's worth of output sent and not yet acknowledged (stream.ack), past which its producer
 * waits, so the pipe from the process fills and the process blocks, as it would behind a slow terminal.
 */
import { randomUUID } from 'node:crypto';
import type { PassThrough } from 'node:stream';
import { notFound, serializeError } from '../../../shared/domain/errors';
import { STREAM_WINDOW_BYTES } from '../../../shared/domain/streams';
import type { PushedEvent } from '../../../shared/ipc/events';
import type { TerminalSize } from '../../engine/api';

/** log lines in flight before the follower waits for an ack */
const LOG_WINDOW_LINES = 5000;

export interface FlowWindow {
  inflight: number;
  limit: number;
  waiters: Array<() => void>;
}

export interface Session {
  id: string;
  owner: string;
  kind: 'exec' | 'attach' | 'logs';
  abort: AbortController;
  window: FlowWindow;
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
  /** set while the session's end waits for an event to say why (see TerminalSessions.endReason) */
  onEndReason?: (reason: string) => void;
}

/** Resolves once the window has room (at once when it has). */
export function waitWindow(w: FlowWindow): Promise<void> {
  if (w.inflight <= w.limit) return Promise.resolve();
  return new Promise((r) => w.waiters.push(r));
}

export function releaseWindow(w: FlowWindow, all = false): void {
  if (!all && w.inflight > w.limit) return;
  const waiters = w.waiters.splice(0);
  for (const r of waiters) r();
}

export class SessionTable {
  readonly sessions = new Map<string, Session>();

  constructor(
    private readonly emit: (event: PushedEvent, owner: string) => void,
    /** refuses an owner holding too many sessions and forwards (counted across kinds by the caller) */
    private readonly checkQuota: (owner: string) => void,
  ) {}

  start(owner: string, kind: Session['kind']): Session {
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

  finish(s: Session, result: { exitCode?: number; error?: unknown; reason?: string }): void {
    if (!this.sessions.has(s.id)) return;
    this.sessions.delete(s.id);
    s.stdin?.destroy();
    s.resize?.clear();
    releaseWindow(s.window, true);
    const err = result.error === undefined ? undefined : serializeError(result.error);
    this.emit(
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

  own(owner: string, sessionId: string): Session {
    const s = this.sessions.get(sessionId);
    // another connection's session is reported as absent: ids are not a capability to be guessed across windows
    if (!s || s.owner !== owner) throw notFound(`no open session ${sessionId}`);
    return s;
  }

  ack(owner: string, sessionId: string, n: number): void {
    const s = this.sessions.get(sessionId);
    // acks may arrive after the session ended: not an error
    if (!s || s.owner !== owner) return;
    s.window.inflight = Math.max(0, s.window.inflight - n);
    releaseWindow(s.window);
  }

  async close(owner: string, sessionId: string): Promise<void> {
    const s = this.sessions.get(sessionId);
    if (!s || s.owner !== owner) return;
    s.abort.abort();
    releaseWindow(s.window, true);
    await s.done;
  }

  ofOwner(owner?: string): Session[] {
    return [...this.sessions.values()].filter((s) => owner === undefined || s.owner === owner);
  }
}
