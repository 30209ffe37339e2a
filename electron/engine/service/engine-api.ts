/** The engine as every front door sees it: the sandbox and container verbs, events, and the optional parts. */
import type { ContainerApi, ContainerEvent } from '../../../shared/domain/container';
import type { LogEntry } from '../../../shared/domain/cri-log';
import type { LabApi } from '../../../shared/domain/lab';
import type { SandboxApi, SandboxEvent } from '../../../shared/domain/sandbox';
import type { EngineOptions } from '../common/options';
import type { ContainerLogOptions } from '../containers/log-reader';
import type { ContainerStreaming } from '../containers/streaming';
import type { ImageStore } from '../images/types';
import type { ForeignNode } from '../foreign/deps';
import type { ForeignMeasurements, ForeignSource } from './foreign-measurer';
import type { NodesMeasurements } from './nodes-measurer';

export type SandboxEventListener = (e: SandboxEvent | ContainerEvent) => void;

/** The engine as hosts (Electron main, browser-mode host, CLI, CRI server) see it. */
export interface Engine extends SandboxApi, ContainerApi {
  readonly options: EngineOptions;
  /** the image store (absent on an engine that could not start) */
  readonly images?: ImageStore;
  subscribe(listener: SandboxEventListener): () => void;
  /** the CNI lab (real engines only; the unavailable stand-in and CRI endpoints have none) */
  lab?: LabApi;
  /** exec/attach/port-forward with live streams (containers/streaming.ts; absent on the unavailable stand-in: the app
   * then says this endpoint has no streaming) */
  readonly streaming?: ContainerStreaming;
  /** a container's CRI log lines (containers/log-reader.ts; absent on the unavailable stand-in) */
  containerLogs?(id: string, opts?: ContainerLogOptions): Promise<AsyncIterable<LogEntry>>;
  /**
   * The measuring verbs on another CRI runtime's pods on this node (foreign-measurer.ts), with this engine's process
   * runner; absent on the unavailable stand-in. cniCacheDir: that runtime's libcni cache dir (default /var/lib/cni);
   * node: where that runtime lives when not in the host's namespaces (a kind node), from the node's opening
   */
  measureForeign?(source: ForeignSource, opts?: { cniCacheDir?: string; node?: ForeignNode }): ForeignMeasurements;
  /** the measuring verbs across several nodes of this machine (nodes-measurer.ts); absent on the unavailable stand-in */
  measureNodes?(nodes: Array<{ source: ForeignSource; node: ForeignNode }>): NodesMeasurements;
  /** releases the state-dir lock; sandboxes keep running */
  close(): Promise<void>;
}
