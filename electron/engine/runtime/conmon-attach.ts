/**
 * A client for conmon's attach socket and `ctl` fifo, behind the engine's attach interface (RuntimeStreamIO).
 *
 * Why this framing: conmon's attach socket (`attach` in the directory it was given with `-b`, reached through the
 * `<socket-dir>/<id>` link) is SOCK_SEQPACKET, so every read returns exactly one message as conmon sent it and no
 * length prefix is needed. Each message from conmon is one chunk it read from the container, its first byte naming
 * the stream: 2 stdout, 3 stderr (conmon's pipe numbers; 1 is stdin); a terminal's output comes as stdout. Input
 * goes the other way without a prefix: conmon writes whatever one message holds to the container's stdin, and reads
 * at most CONMON_MAX_INPUT bytes of a message (SEQPACKET drops the rest of a longer one), so input is sent in pieces
 * no larger. The client's half-close (shutdown SHUT_WR) is conmon's cue to close the container's stdin, unless it
 * runs with `--leave-stdin-open`. Resizes do not go through the socket: they are the line `1 <height> <width>` on the
 * `ctl` fifo next to it (conmon sets the pty's size from it), as is `2 0 0`, which makes conmon reopen its log.
 * (docs/semantics.md#container-monitor)
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { SeqpacketSocket } from 'node-unix-socket';
import { PodscopeError } from '../../../shared/domain/errors';
import { ATTACH_MAX_BEHIND, shortSocketPath, type RuntimeStreamIO } from './runc-stream';

/** conmon's stream byte in front of each output message */
export const CONMON_STREAM = { STDIN: 1, STDOUT: 2, STDERR: 3 } as const;
/** the most of one input message conmon reads (its CONN_SOCK_BUF_SIZE) */
export const CONMON_MAX_INPUT = 32 * 1024;
/** conmon's ctl fifo messages */
export const CONMON_CTL = {
  reopenLogs: '2 0 0\n',
  resize: (s: { width: number; height: number }) => `1 ${Math.floor(s.height)} ${Math.floor(s.width)}\n`,
};

/** the attach session's input side: stdin_once without a terminal closes the container's stdin at the client's end */
export type ConmonAttachIO = RuntimeStreamIO & { stdinOnce?: boolean };

/**
 * Writes one message to conmon's ctl fifo in `dir`. O_NONBLOCK: fails with ENXIO at once when conmon (the reader) is
 * gone, instead of waiting for a reader that never comes.
 */
export async function writeConmonCtl(dir: string, message: string, monitorPid?: number): Promise<void> {
  const fh = await open(join(dir, 'ctl'), constants.O_WRONLY | constants.O_NONBLOCK).catch((e: NodeJS.ErrnoException) => {
    throw new PodscopeError(
      'FailedPrecondition',
      `the container's conmon${monitorPid ? ` (pid ${monitorPid})` : ''} does not answer: ${e.code}`,
    );
  });
  try {
    await fh.write(message);
  } finally {
    await fh.close();
  }
}

/** connects to conmon's attach socket in `dir` */
export async function connectConmonAttach(dir: string): Promise<SeqpacketSocket> {
  // a native addon (a dlopen): loaded by the first attach or exec -t, not by every verb that builds an engine
  const { SeqpacketSocket } = await import('node-unix-socket');
  let short: { path: string; close(): void };
  try {
    short = shortSocketPath(dir, 'attach');
  } catch (e) {
    throw new PodscopeError('FailedPrecondition', `the container's state dir is gone: ${(e as NodeJS.ErrnoException).code}`);
  }
  const refused = (e: unknown) =>
    new PodscopeError(
      'FailedPrecondition',
      `cannot attach: the container's conmon does not answer (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); the container has exited`,
    );
  return new Promise<SeqpacketSocket>((resolve, reject) => {
    const sock = new SeqpacketSocket();
    sock.once('error', (e) => reject(refused(e)));
    try {
      sock.connect(short.path, () => resolve(sock));
    } catch (e) {
      sock.destroy();
      reject(refused(e));
    }
  }).finally(() => short.close());
}

/**
 * A session on the container's stdio through conmon's attach socket in `dir`; resolves when conmon ends it (the
 * container exited), the client detaches (signal, end of input without stdin_once) or falls too far behind.
 */
export async function attachToConmon(dir: string, io: ConmonAttachIO): Promise<void> {
  const sock = await connectConmonAttach(dir);
  if (io.signal?.aborted) {
    sock.destroy();
    return;
  }
  // containerd's attach: the first client's end of input closes the container's stdin when it is stdin_once without a
  // terminal (conmon then runs without --leave-stdin-open and closes it at our half-close); otherwise it detaches
  await conmonSession(sock, dir, io, io.stdinOnce && !io.tty ? 'half-close' : 'detach');
}

/**
 * Runs a session on a connected attach socket until conmon ends it (EOF: conmon has drained the process's output and
 * exits), the signal aborts or the client falls too far behind. `inputEnd`: what the end of the client's input does —
 * half-close (conmon closes the process's stdin), detach, or nothing (a terminal stays open, as with kubectl exec -t).
 */
export function conmonSession(
  sock: SeqpacketSocket,
  dir: string,
  io: RuntimeStreamIO,
  inputEnd: 'half-close' | 'detach' | 'nothing',
): Promise<void> {
  return new Promise<void>((resolve) => {
    let closed = false;
    const finish = () => {
      if (closed) return;
      closed = true;
      // never inside one of the socket's own events: node-unix-socket 0.2.7 aborts the process (a Rust panic that
      // cannot unwind) when a socket is destroyed from its 'data' handler and its read loop then emits again
      setImmediate(() => sock.destroy());
      io.stdin?.off('data', onData);
      io.stdin?.off('end', onEnd);
      io.signal?.removeEventListener('abort', finish);
      unresize();
      resolve();
    };
    // the container is never held back for a slow client (conmon writes to every attached socket in turn): one
    // that has fallen ATTACH_MAX_BEHIND behind is detached
    const deliver = (w: NodeJS.WritableStream | null | undefined, payload: Buffer) => {
      if (!w) return;
      if ((w as { writableLength?: number }).writableLength! > ATTACH_MAX_BEHIND) finish();
      else w.write(payload);
    };
    sock.on('data', (msg: Buffer) => {
      if (closed || msg.length === 0) return;
      const payload = msg.subarray(1);
      if (msg[0] === CONMON_STREAM.STDOUT) deliver(io.stdout, payload);
      else if (msg[0] === CONMON_STREAM.STDERR) deliver(io.tty ? io.stdout : io.stderr, payload);
    });
    const onData = (b: Buffer) => {
      if (closed) return;
      for (let off = 0; off < b.length; off += CONMON_MAX_INPUT) sock.write(b.subarray(off, off + CONMON_MAX_INPUT));
    };
    const onEnd = () => {
      if (closed) return;
      if (inputEnd === 'half-close') sock.end();
      else if (inputEnd === 'detach') finish();
    };
    io.stdin?.on('data', onData);
    io.stdin?.once('end', onEnd);
    const unresize =
      io.tty && io.resize
        ? io.resize.subscribe((s) => void writeConmonCtl(dir, CONMON_CTL.resize(s)).catch(() => undefined))
        : () => undefined;
    io.signal?.addEventListener('abort', finish, { once: true });
    sock.on('error', finish);
    sock.once('end', finish);
    sock.once('close', finish);
  });
}
