/** Events pushed from the host to every renderer: engine events tagged with the endpoint they came from. */
import type { ContainerEvent } from '../domain/container';
import type { SandboxEvent } from '../domain/sandbox';
import type { EndpointDelta, EndpointView } from '../domain/endpoints';
import type { LabProgress } from '../domain/lab';
import type { ImagePullProgress, LogLine } from '../domain/streams';

export type PushedEvent =
  | { kind: 'sandbox'; endpointId: string; event: SandboxEvent }
  | { kind: 'container'; endpointId: string; event: ContainerEvent }
  | { kind: 'endpoints.changed'; endpoints: EndpointView[] }
  /** a CRI endpoint's rows that changed (one push per re-list or event burst, however many rows) */
  | ({ kind: 'delta'; endpointId: string } & EndpointDelta)
  /** a CNI lab run moved on (a plugin exec finished, a snapshot was taken) */
  | { kind: 'lab.progress'; endpointId: string; progress: LabProgress }
  /** an image pull moved on (requestId is the caller's, from images.pull) */
  | { kind: 'image.pull'; endpointId: string; requestId: string; progress: ImagePullProgress }
  /** output of an exec/attach session, base64 (at most STREAM_CHUNK_BYTES decoded); acknowledge with stream.ack */
  | { kind: 'stream.data'; sessionId: string; stream: 'stdout' | 'stderr'; data: string }
  /**
   * the session ended: the exit code of an exec, or the error that ended it; reason when its container or pod went
   * ("container web exited", "pod web was removed")
   */
  | { kind: 'stream.exit'; sessionId: string; exitCode?: number; error?: { code: string; message: string }; reason?: string }
  /** log records of a logs.follow session (acknowledge with stream.ack, bytes = lines.length) */
  | { kind: 'logs.lines'; sessionId: string; lines: LogLine[] }
  /** a forward stopped on its own: its endpoint went away, or its pod was stopped or removed (reason says which) */
  | { kind: 'portForward.closed'; id: string; reason?: string };

/** The one Electron IPC channel name events travel on (main → renderer). */
export const EVENT_CHANNEL = 'podscope:event';
/** The Electron IPC channel requests travel on (renderer → main, invoke/handle). */
export const INVOKE_CHANNEL = 'podscope:invoke';
