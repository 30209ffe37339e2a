/** The streams of an exec or attach session, as the runtime wires them to the process (containers/streaming.ts builds on them). */
import type { Readable, Writable } from 'node:stream';

/** columns and rows, as remotecommand's resize channel sends them ({"Width":…, "Height":…}) */
export interface TerminalSize {
  width: number;
  height: number;
}

/** a source of terminal resizes; the maker subscribes once and unsubscribes when the process ends */
export interface ResizeSource {
  subscribe(listener: (size: TerminalSize) => void): () => void;
}

export interface StreamIO {
  /** null: no stdin (the process sees /dev/null or a closed pipe). End of stream = EOF on the process's stdin. */
  stdin: Readable | null;
  /** with tty, stdout carries the terminal's output and stderr is unused (one stream, as in CRI) */
  stdout: Writable | null;
  stderr: Writable | null;
  tty: boolean;
  /** only meaningful with tty */
  resize?: ResizeSource;
  /** aborting ends the session: exec kills the process, attach detaches, port-forward closes the connection */
  signal?: AbortSignal;
}
