/**
 * What the app's container screens see of images, logs and interactive sessions. The sessions themselves (exec,
 * attach, log follow, port-forward) live in the host process; the renderer holds only their ids and gets output as
 * pushed events (shared/ipc/events.ts), flow-controlled by acks so a chatty process cannot flood the window.
 */
import { z } from 'zod';

/** An image as every endpoint can describe it (CRI Image, or a record of the local store). */
export interface ImageView {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  pinned: boolean;
  username: string;
  uid?: number;
}

/** An image's layers and config (the OCI image config under ImageStatus verbose info, as containerd and Podscope put it). */
export interface ImageDetail {
  image: ImageView;
  os?: string;
  architecture?: string;
  /** the image config's `created` (when the image was built), never when this store got it */
  createdAt?: string;
  /** when the endpoint's store got the image (pull or load), where it says */
  storedAt?: string;
  /** layer diffIDs, base first */
  layers: string[];
  /** the OCI image config's `config` object (Env, Entrypoint, Cmd, WorkingDir, User, ExposedPorts, Labels, …) */
  config?: Record<string, unknown>;
  /** ImageStatus verbose info as the endpoint returned it */
  info: Record<string, string>;
}

export interface ImagePullProgress {
  ref: string;
  phase: string;
  doneBytes: number;
  totalBytes: number;
}

/** One CRI log record: `<RFC3339Nano> <stdout|stderr> <F|P> <text>` (P records are joined before they are sent). */
export interface LogLine {
  time: string;
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface PortForwardView {
  id: string;
  endpointId: string;
  podSandboxId: string;
  /** the pod's port */
  port: number;
  /** always 127.0.0.1: a forward is for this machine only */
  hostAddress: string;
  hostPort: number;
  /** connections carried so far */
  connections: number;
}

/** bytes of output a session may have in flight (sent, not acknowledged) before its source is paused */
export const STREAM_WINDOW_BYTES = 256 * 1024;
/** the largest output chunk one event carries */
export const STREAM_CHUNK_BYTES = 32 * 1024;
/** log lines one event carries at most */
export const LOG_BATCH_LINES = 500;
/** open sessions (exec, attach, logs) and forwards one window or socket may hold */
export const MAX_SESSIONS_PER_CONNECTION = 32;

export const SessionIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9-]+$/, 'not a session id');

export const TerminalSizeSchema = z.strictObject({
  cols: z.number().int().min(1).max(1000),
  rows: z.number().int().min(1).max(1000),
});
