/**
 * What exec, attach and port-forward need: a ContainerStreaming (the CRI client's with --endpoint, else the in-process
 * engine's `streaming`) and, for -t, this process's terminal in raw mode with its size changes forwarded.
 */
import type { ReadStream, WriteStream } from 'node:tty';
import { notSupported } from '../../shared/domain/errors';
import type { EndpointApi } from '../../shared/domain/endpoints';
import type { ContainerStreaming, ResizeSource, TerminalSize } from '../engine/api';
import { withEndpoint } from './api';
import type { Flags } from './args';

export async function withStreaming<T>(flags: Flags, fn: (streaming: ContainerStreaming, api: EndpointApi) => Promise<T>): Promise<T> {
  return withEndpoint(flags, ({ api, streaming }) => {
    // the CRI client always has it; the built-in engine has it once its streaming half is wired in
    if (!streaming) throw notSupported('streaming', 'this engine does not support exec, attach or port-forward streams');
    return fn(streaming, api);
  });
}

/** Puts stdin in raw mode (keys go to the container as typed, ^C included) until the returned restore is called. */
export function rawTerminal(stdin: NodeJS.ReadStream = process.stdin): () => void {
  const tty = stdin as ReadStream;
  if (!tty.isTTY || typeof tty.setRawMode !== 'function') return () => undefined;
  const was = tty.isRaw;
  tty.setRawMode(true);
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    tty.setRawMode(was);
  };
  // a crash must not leave the user's shell in raw mode
  process.once('exit', restore);
  return restore;
}

/** The terminal's size now and on every SIGWINCH (Node reports it as 'resize' on a TTY stdout). */
export function terminalResizes(out: NodeJS.WriteStream = process.stdout): ResizeSource | undefined {
  const tty = out as WriteStream;
  if (!tty.isTTY) return undefined;
  return {
    subscribe(listener: (size: TerminalSize) => void) {
      const send = () => listener({ width: tty.columns, height: tty.rows });
      send();
      tty.on('resize', send);
      return () => tty.off('resize', send);
    },
  };
}
