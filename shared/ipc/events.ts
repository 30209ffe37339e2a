/** Events pushed from the host to every renderer: engine events tagged with the endpoint they came from. */
import type { ContainerEvent } from '../domain/container';
import type { SandboxEvent } from '../domain/sandbox';
import type { EndpointDelta, EndpointView } from '../domain/endpoints';
import type { LabProgress } from '../domain/lab';

export type PushedEvent =
  | { kind: 'sandbox'; endpointId: string; event: SandboxEvent }
  | { kind: 'container'; endpointId: string; event: ContainerEvent }
  | { kind: 'endpoints.changed'; endpoints: EndpointView[] }
  /** a CRI endpoint's rows that changed (one push per re-list or event burst, however many rows) */
  | ({ kind: 'delta'; endpointId: string } & EndpointDelta)
  /** a CNI lab run moved on (a plugin exec finished, a snapshot was taken) */
  | { kind: 'lab.progress'; endpointId: string; progress: LabProgress };

/** The one Electron IPC channel name events travel on (main → renderer). */
export const EVENT_CHANNEL = 'podscope:event';
/** The Electron IPC channel requests travel on (renderer → main, invoke/handle). */
export const INVOKE_CHANNEL = 'podscope:invoke';
