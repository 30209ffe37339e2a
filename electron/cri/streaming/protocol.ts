/**
 * The wire facts of the Kubernetes streaming protocols, shared by the streaming server and the client.
 * Sources (facts only): k8s.io/apimachinery pkg/util/remotecommand/constants.go, pkg/util/httpstream (handshake
 * headers), pkg/util/httpstream/wsstream (channel byte framing), k8s.io/kubelet pkg/cri/streaming/remotecommand and
 * portforward (which streams a session has, what goes on the error stream). See docs/semantics.md#cri-streaming.
 */

/** remotecommand protocol versions negotiated in X-Stream-Protocol-Version (SPDY) */
export const REMOTECOMMAND_V1 = 'channel.k8s.io';
export const REMOTECOMMAND_V2 = 'v2.channel.k8s.io';
export const REMOTECOMMAND_V3 = 'v3.channel.k8s.io';
export const REMOTECOMMAND_V4 = 'v4.channel.k8s.io';
/** what the server accepts over SPDY, newest first (kubelet's default list) */
export const SPDY_REMOTECOMMAND_PROTOCOLS = [REMOTECOMMAND_V4, REMOTECOMMAND_V3, REMOTECOMMAND_V2, REMOTECOMMAND_V1] as const;
export const PORTFORWARD_PROTOCOL = 'portforward.k8s.io';

/** WebSocket subprotocols: the binary channel protocol, its base64 twin, their v4 forms (JSON status), and v5 (close signal) */
export const WS_CHANNEL = 'channel.k8s.io';
export const WS_BASE64_CHANNEL = 'base64.channel.k8s.io';
export const WS_V4_CHANNEL = 'v4.channel.k8s.io';
export const WS_V4_BASE64_CHANNEL = 'v4.base64.channel.k8s.io';
export const WS_V5_CHANNEL = 'v5.channel.k8s.io';
/** exec/attach over WebSocket; "" (no subprotocol offered) means the binary v1 channel protocol */
export const WS_REMOTECOMMAND_PROTOCOLS = [WS_V5_CHANNEL, WS_V4_CHANNEL, WS_V4_BASE64_CHANNEL, WS_CHANNEL, WS_BASE64_CHANNEL] as const;
/** port-forward over WebSocket (kubelet accepts the v4 channel protocols; portforward.k8s.io is taken as binary too) */
export const WS_PORTFORWARD_PROTOCOLS = [WS_V4_CHANNEL, WS_V4_BASE64_CHANNEL, PORTFORWARD_PROTOCOL] as const;

export const HEADER_PROTOCOL_VERSION = 'X-Stream-Protocol-Version';
export const HEADER_ACCEPTED_PROTOCOL_VERSIONS = 'X-Accepted-Stream-Protocol-Versions';
export const SPDY_UPGRADE = 'SPDY/3.1';

/** SPDY stream headers (sent lower-case on the wire: Go's framer lower-cases http.Header keys) */
export const HEADER_STREAM_TYPE = 'streamtype';
export const HEADER_PORT = 'port';
export const HEADER_REQUEST_ID = 'requestid';
export type RemoteCommandStreamType = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';
export type PortForwardStreamType = 'data' | 'error';

/** WebSocket channel numbers of remotecommand (the POSIX fds, then error and resize) */
export const CHANNEL_STDIN = 0;
export const CHANNEL_STDOUT = 1;
export const CHANNEL_STDERR = 2;
export const CHANNEL_ERROR = 3;
export const CHANNEL_RESIZE = 4;
/** v5: a frame [255, n] closes channel n (the only way to send stdin EOF over WebSocket) */
export const CHANNEL_CLOSE = 255;

export const NON_ZERO_EXIT_CODE_REASON = 'NonZeroExitCode';
export const EXIT_CODE_CAUSE_TYPE = 'ExitCode';

/** metav1.Status as it travels on the v4 error stream (json.Marshal of the Go struct: empty fields omitted) */
export interface StreamStatus {
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { causes?: { reason?: string; message?: string; field?: string }[] };
  code?: number;
}

export const successStatus = (): StreamStatus => ({ metadata: {}, status: 'Success' });

/** kubelet's ServeExec: a process that exited non-zero is a Failure with reason NonZeroExitCode and an ExitCode cause */
export function exitCodeStatus(exitCode: number, cmd: string[]): StreamStatus {
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command ${JSON.stringify(cmd)}, exit code ${exitCode}`,
    reason: NON_ZERO_EXIT_CODE_REASON,
    details: { causes: [{ reason: EXIT_CODE_CAUSE_TYPE, message: String(exitCode) }] },
  };
}

/** apierrors.NewInternalError: anything else that went wrong running the command */
export function internalErrorStatus(message: string): StreamStatus {
  return {
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: ${message}`,
    reason: 'InternalError',
    details: { causes: [{ message }] },
    code: 500,
  };
}

/** The pre-v4 error stream carries only the text of a failure (nothing on success). */
export function statusText(status: StreamStatus): string {
  return status.status === 'Success' ? '' : (status.message ?? 'error');
}

/** what a client makes of the error stream: an exit code, or a failure that is not the process's own */
export type SessionOutcome = { exitCode: number } | { error: string };

export function outcomeOfV4(text: string): SessionOutcome {
  // a v4 server always ends with a Status (kubelet writes Success too): none means the connection was lost
  if (text.trim() === '') return { error: 'the session ended without a status (connection lost)' };
  let status: StreamStatus;
  try {
    status = JSON.parse(text) as StreamStatus;
  } catch {
    return { error: `error stream: not a Status: ${text.slice(0, 200)}` };
  }
  if (status.status === 'Success') return { exitCode: 0 };
  if (status.reason === NON_ZERO_EXIT_CODE_REASON) {
    const cause = status.details?.causes?.find((c) => c.reason === EXIT_CODE_CAUSE_TYPE);
    const code = Number(cause?.message);
    if (Number.isInteger(code)) return { exitCode: code };
  }
  return { error: status.message ?? 'stream failed' };
}

export function outcomeOfLegacy(text: string): SessionOutcome {
  if (text === '') return { exitCode: 0 };
  // pre-v4 servers send only kubelet's message text; the exit code is at its end when the process exited
  const m = /exit code (\d+)$/.exec(text.trim());
  return m ? { exitCode: Number(m[1]) } : { error: text };
}

/** Terminal sizes arrive as concatenated JSON objects ({"Width":…,"Height":…}), read as a json.Decoder would. */
export class ResizeDecoder {
  private buf = '';
  constructor(private readonly onSize: (size: { width: number; height: number }) => void) {}
  push(chunk: Buffer | string): void {
    this.buf += chunk.toString();
    let depth = 0;
    let inString = false;
    let escaped = false;
    let start = -1;
    let consumed = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === '\\') escaped = true;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '{') {
        if (depth++ === 0) start = i;
      } else if (c === '}' && depth > 0 && --depth === 0) {
        this.emit(this.buf.slice(start, i + 1));
        consumed = i + 1;
      }
    }
    this.buf = this.buf.slice(consumed);
    // a peer sending garbage must not grow the buffer without bound
    if (this.buf.length > 4096) this.buf = '';
  }
  private emit(text: string): void {
    try {
      const v = JSON.parse(text) as { Width?: unknown; Height?: unknown };
      const width = Number(v.Width);
      const height = Number(v.Height);
      if (Number.isInteger(width) && Number.isInteger(height) && width >= 0 && height >= 0 && width < 65536 && height < 65536) {
        this.onSize({ width, height });
      }
    } catch {
      // json.Decoder would stop at a malformed object; a resize that cannot be read is dropped, the session goes on
    }
  }
}

export const encodeResize = (size: { width: number; height: number }): Buffer =>
  Buffer.from(`${JSON.stringify({ Width: size.width, Height: size.height })}\n`);
