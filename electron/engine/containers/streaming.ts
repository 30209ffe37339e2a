/**
 * The interactive half of a container runtime: exec with a live stream, attach to the container's own stdio, and
 * forward a TCP connection into the pod's network namespace. The same interface has three users and two makers:
 * - made by the engine (`engine.streaming`, over the runtime's exec, conmon's attach socket and the pod's netns) and by
 *   the CRI client (Exec/Attach/PortForward RPCs, then the streaming URL they return), so the app, the CLI and
 *   `podscope cri` speak to a built-in pod and to containerd the same way;
 * - used by the CRI streaming server (electron/cri/streaming), the IPC router's stream sessions and the CLI.
 * It is the shape of kubelet's streaming Runtime (k8s.io/kubelet/pkg/cri/streaming: Exec, Attach, PortForward), with
 * Node streams in place of io.Reader/io.Writer.
 */
import type { Duplex } from 'node:stream';

import type { StreamIO } from '../runtime/stream-io';

// the runtime's own stream types (it reads and writes them); every user of streaming imports them from here
export type { ResizeSource, StreamIO, TerminalSize } from '../runtime/stream-io';

export interface ExecStreamRequest extends StreamIO {
  /** id or unique prefix */
  containerId: string;
  cmd: string[];
}

export interface ExecStreamResult {
  /** the process's exit code (128+N for signal N, as a shell reports it) */
  exitCode: number;
}

export interface AttachRequest extends StreamIO {
  containerId: string;
}

export interface PortForwardRequest {
  /** pod sandbox id or unique prefix */
  sandboxId: string;
  port: number;
  /** the client's side of the connection; the maker pipes it both ways to the pod's port and ends it when either side ends */
  stream: Duplex;
  signal?: AbortSignal;
}

export interface ContainerStreaming {
  /** resolves when the process exits; rejects with a PodscopeError (NotFound, FailedPrecondition, …) before it starts */
  exec(req: ExecStreamRequest): Promise<ExecStreamResult>;
  /** resolves when the container exits or the client detaches (stdin ended without tty, or signal aborted) */
  attach(req: AttachRequest): Promise<void>;
  /** resolves when the forwarded connection has closed on both sides */
  portForward(req: PortForwardRequest): Promise<void>;
}
