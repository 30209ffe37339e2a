/**
 * The renderer half of the host's stream sessions (exec, attach, log follow): output arrives as pushed events for
 * one session id and is acknowledged after it was handled, which is what lets the host pause a chatty process
 * instead of flooding the window (see electron/ipc/stream-sessions.ts).
 * Events can arrive before the call that opened the session has returned its id, so a listener is registered first
 * and events for ids not yet known are kept until the id is (bounded).
 */
import type { LogLine } from '../../../shared/domain/streams';
import type { PodscopeClient } from '../../../shared/ipc/client';
import type { PushedEvent } from '../../../shared/ipc/events';

export interface SessionHandlers {
  onData?(bytes: Uint8Array, stream: 'stdout' | 'stderr'): void;
  onLines?(lines: LogLine[]): void;
  /** reason: why the host ended it when its container or pod went ("container web exited") */
  onExit?(e: { exitCode?: number; error?: { code: string; message: string }; reason?: string }): void;
}

type SessionEvent = Extract<PushedEvent, { kind: 'stream.data' | 'stream.exit' | 'logs.lines' }>;

export function decodeBase64(data: string): Uint8Array {
  const bin = atob(data);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const EARLY_LIMIT = 256;

export interface SessionHandle {
  /** resolves with the session id once the host has opened it */
  readonly id: Promise<string>;
  /** ends the session on the host (idempotent) and stops listening */
  close(): Promise<void>;
}

/**
 * Opens a session with `open` (a channel call returning `{ sessionId }`), routes its events to `handlers` and acks
 * them. The returned handle closes it; close before the id is known closes it as soon as it is.
 */
export function openSession(client: PodscopeClient, open: () => Promise<{ sessionId: string }>, handlers: SessionHandlers): SessionHandle {
  let sessionId: string | undefined;
  let closed = false;
  let ended = false;
  const early: SessionEvent[] = [];
  const handle = (e: SessionEvent) => {
    if (e.kind === 'stream.data') {
      const bytes = decodeBase64(e.data);
      handlers.onData?.(bytes, e.stream);
      void client.call('stream.ack', { sessionId: e.sessionId, bytes: bytes.length }).catch(() => {});
    } else if (e.kind === 'logs.lines') {
      handlers.onLines?.(e.lines);
      void client.call('stream.ack', { sessionId: e.sessionId, bytes: e.lines.length }).catch(() => {});
    } else {
      ended = true;
      handlers.onExit?.({
        ...(e.exitCode !== undefined && { exitCode: e.exitCode }),
        ...(e.error && { error: e.error }),
        ...(e.reason !== undefined && { reason: e.reason }),
      });
    }
  };
  const unsubscribe = client.onEvent((e) => {
    if (closed || (e.kind !== 'stream.data' && e.kind !== 'stream.exit' && e.kind !== 'logs.lines')) return;
    if (sessionId === undefined) {
      if (early.length < EARLY_LIMIT) early.push(e);
      return;
    }
    if (e.sessionId === sessionId) handle(e);
  });
  const id = open().then(
    (r) => {
      sessionId = r.sessionId;
      for (const e of early.splice(0)) if (e.sessionId === sessionId && !closed) handle(e);
      if (closed) void client.call('stream.close', { sessionId }).catch(() => {});
      return r.sessionId;
    },
    (err: unknown) => {
      unsubscribe();
      throw err;
    },
  );
  // a failed open is reported through `id`; nobody may be awaiting it yet
  id.catch(() => {});
  return {
    id,
    async close() {
      if (closed) return;
      closed = true;
      unsubscribe();
      if (sessionId !== undefined && !ended) await client.call('stream.close', { sessionId }).catch(() => {});
    },
  };
}
