/**
 * GetContainerEvents: the engine's container events (each with its pod's status and its own) and its sandbox
 * events as CRI container events, the latter with container id = sandbox id as
 * containerd does for sandboxes (docs/semantics.md#container-events): added ⇒ CREATED, the CRI state turning READY ⇒ STARTED,
 * READY ⇒ NOTREADY ⇒ STOPPED, removed ⇒ DELETED. Progress and CNI-config events have no CRI equivalent.
 * Each stream tracks the last state it saw per sandbox so it only reports transitions.
 */
import { status as GrpcStatus, type ServerWritableStream, type StatusObject } from '@grpc/grpc-js';
import type { SandboxEvent, SandboxSummary } from '../../../shared/domain/sandbox';
import * as pb from '../generated/runtime_v1';
import { createdAtNs, stateToProto } from '../convert/sandbox';
import { containerStateToProto } from '../convert/container';
import type { ContainerEvent, ContainerSummary } from '../../../shared/domain/container';
import type { CriEngine } from './handler';
import { toGrpcStatus } from '../errors';

type EventStream = ServerWritableStream<pb.GetEventsRequest, pb.ContainerEventResponse>;

function summaryStatus(s: SandboxSummary): pb.PodSandboxStatus {
  return {
    id: s.id,
    metadata: { ...s.metadata },
    state: stateToProto(s.state),
    createdAt: createdAtNs(s),
    network: { ip: s.ip, additionalIps: s.additionalIps.map((ip) => ({ ip })) },
    linux: undefined,
    labels: { ...s.labels },
    annotations: { ...s.annotations },
    runtimeHandler: s.runtimeHandler,
  };
}

/** Pure translation, one engine event ⇒ zero or more CRI events; `seen` is the stream's memory. */
export function translateSandboxEvent(
  e: SandboxEvent,
  seen: Map<string, SandboxSummary>,
): Array<{ type: pb.ContainerEventType; summary: SandboxSummary }> {
  const T = pb.ContainerEventType;
  if (e.type === 'sandbox.added' || e.type === 'sandbox.changed') {
    const before = seen.get(e.id);
    seen.set(e.id, e.summary);
    const out: Array<{ type: pb.ContainerEventType; summary: SandboxSummary }> = [];
    if (!before) out.push({ type: T.CONTAINER_CREATED_EVENT, summary: e.summary });
    const wasReady = before?.state === 'SANDBOX_READY';
    const isReady = e.summary.state === 'SANDBOX_READY';
    if (!wasReady && isReady) out.push({ type: T.CONTAINER_STARTED_EVENT, summary: e.summary });
    if (wasReady && !isReady) out.push({ type: T.CONTAINER_STOPPED_EVENT, summary: e.summary });
    return out;
  }
  if (e.type === 'sandbox.removed') {
    const before = seen.get(e.id);
    seen.delete(e.id);
    return before ? [{ type: T.CONTAINER_DELETED_EVENT, summary: { ...before, state: 'SANDBOX_NOTREADY' } }] : [];
  }
  return [];
}

/** Container events ⇒ CRI events: added ⇒ CREATED, RUNNING ⇒ STARTED, EXITED ⇒ STOPPED, removed ⇒ DELETED. */
export function translateContainerEvent(
  e: ContainerEvent,
  seen: Map<string, ContainerSummary>,
): Array<{ type: pb.ContainerEventType; summary: ContainerSummary }> {
  const T = pb.ContainerEventType;
  if (e.type === 'container.removed') {
    const before = seen.get(e.id);
    seen.delete(e.id);
    return before ? [{ type: T.CONTAINER_DELETED_EVENT, summary: before }] : [];
  }
  const before = seen.get(e.id);
  seen.set(e.id, e.summary);
  const out: Array<{ type: pb.ContainerEventType; summary: ContainerSummary }> = [];
  if (!before) out.push({ type: T.CONTAINER_CREATED_EVENT, summary: e.summary });
  if (before?.state !== 'CONTAINER_RUNNING' && e.summary.state === 'CONTAINER_RUNNING')
    out.push({ type: T.CONTAINER_STARTED_EVENT, summary: e.summary });
  if (before?.state !== 'CONTAINER_EXITED' && e.summary.state === 'CONTAINER_EXITED')
    out.push({ type: T.CONTAINER_STOPPED_EVENT, summary: e.summary });
  return out;
}

function containerStatusOf(c: ContainerSummary): pb.ContainerStatus {
  return pb.ContainerStatus.fromPartial({
    id: c.id,
    metadata: { ...c.metadata },
    state: containerStateToProto(c.state),
    createdAt: c.createdAtNs,
    exitCode: c.exitCode,
    image: { image: c.image },
    imageRef: c.imageRef,
    imageId: c.imageRef,
    reason: c.reason,
    labels: { ...c.labels },
    annotations: { ...c.annotations },
  });
}

/** Unflushed events a stream may hold before it is ended with RESOURCE_EXHAUSTED (a client that stopped reading). */
export const DEFAULT_EVENTS_HIGH_WATER_MARK = 1024;

export interface ContainerEventsOptions {
  /** see DEFAULT_EVENTS_HIGH_WATER_MARK */
  highWaterMark?: number;
}

/**
 * Serves one stream until the client cancels, the server closes it, or the client stops reading. `streams` is the
 * server's set of open streams: the stream's `end` (unsubscribe and end the call) is in it exactly while the stream
 * is open — added before anything is awaited, removed however the stream finishes — so neither a cancel during the
 * initial list nor one afterwards leaves a subscription behind.
 *
 * Back-pressure: events the transport has not taken yet are counted; when call.write() reports a full buffer and
 * more than `highWaterMark` events are unflushed, the stream unsubscribes and ends with RESOURCE_EXHAUSTED (the
 * client gets what was already queued, then the status) instead of queueing without limit.
 */
export async function serveContainerEvents(
  engine: CriEngine,
  call: EventStream,
  streams: Set<() => void>,
  opts: ContainerEventsOptions = {},
): Promise<void> {
  const highWaterMark = opts.highWaterMark ?? DEFAULT_EVENTS_HIGH_WATER_MARK;
  let done = false;
  let unsubscribe: (() => void) | undefined;
  const finish = () => {
    if (done) return;
    done = true;
    streams.delete(end);
    unsubscribe?.();
    unsubscribe = undefined;
  };
  const end = () => {
    if (done) return;
    finish();
    call.end();
  };
  const fail = (status: Partial<StatusObject>) => {
    if (done) return;
    finish();
    // a server stream reports failure by emitting 'error' with a status object (grpc-js ServerWritableStream)
    call.emit('error', status);
  };
  streams.add(end);
  call.on('cancelled', finish);
  call.on('close', finish);
  call.on('error', finish);
  if (call.cancelled) {
    finish();
    return;
  }

  let unflushed = 0;
  /** false: the client is not reading and the stream has been ended */
  const write = (message: pb.ContainerEventResponse): boolean => {
    unflushed++;
    const ok = call.write(message, () => {
      unflushed--;
    });
    if (!ok && unflushed > highWaterMark) {
      fail({
        code: GrpcStatus.RESOURCE_EXHAUSTED,
        details: `the client is not reading its container events (more than ${highWaterMark} unsent); the stream is ended, subscribe again`,
      });
      return false;
    }
    return true;
  };
  const seen = new Map<string, SandboxSummary>();
  const seenContainers = new Map<string, ContainerSummary>();
  const send = (event: SandboxEvent | ContainerEvent) => {
    if (event.type.startsWith('container.')) {
      for (const { type, summary } of translateContainerEvent(event as ContainerEvent, seenContainers)) {
        if (done) return;
        const pod = seen.get(summary.podSandboxId);
        if (!write(eventMessage(summary.id, type, pod ? summaryStatus(pod) : undefined, [containerStatusOf(summary)]))) return;
      }
      return;
    }
    for (const { type, summary } of translateSandboxEvent(event as SandboxEvent, seen)) {
      if (done) return;
      if (!write(eventMessage(summary.id, type, summaryStatus(summary), []))) return;
    }
  };
  // Subscribe before listing so nothing is lost in between; events that arrive meanwhile wait for the list.
  let pending: (SandboxEvent | ContainerEvent)[] | undefined = [];
  unsubscribe = engine.subscribe((e) => {
    if (done) return;
    if (!pending) return send(e);
    pending.push(e);
    // the list is slow and the engine busy: the same bound applies to what waits for it
    if (pending.length > highWaterMark)
      fail({
        code: GrpcStatus.RESOURCE_EXHAUSTED,
        details: `more than ${highWaterMark} container events queued before the stream could start`,
      });
  });
  let existing: SandboxSummary[];
  let existingContainers: ContainerSummary[];
  try {
    existing = await engine.list();
    existingContainers = await engine.listContainers();
  } catch (e) {
    if (!done) fail(toGrpcStatus(e));
    return;
  }
  // cancelled, closed or failed while listing: finish() already unsubscribed
  if (done || call.cancelled) {
    finish();
    return;
  }
  const queued = pending;
  knowExisting(queued, 'sandbox.added', existing, seen);
  knowExisting(queued, 'container.added', existingContainers, seenContainers);
  pending = undefined;
  for (const e of queued) send(e);
}

/**
 * Sandboxes (or containers) that existed before the stream opened are known, so their next change is a transition,
 * not a CREATED; one whose "added" is still queued is left to that event.
 */
function knowExisting<T extends { id: string }>(
  queued: Array<SandboxEvent | ContainerEvent>,
  added: 'sandbox.added' | 'container.added',
  existing: T[],
  known: Map<string, T>,
): void {
  type Added = Extract<SandboxEvent | ContainerEvent, { type: typeof added }>;
  const addedMeanwhile = new Set(queued.filter((e): e is Added => e.type === added).map((e) => e.id));
  for (const x of existing) if (!addedMeanwhile.has(x.id)) known.set(x.id, x);
}

/** one CRI container event, stamped now */
function eventMessage(
  id: string,
  type: pb.ContainerEventType,
  podSandboxStatus: pb.PodSandboxStatus | undefined,
  containersStatuses: pb.ContainerStatus[],
): pb.ContainerEventResponse {
  return {
    containerId: id,
    containerEventType: type,
    createdAt: (BigInt(Date.now()) * 1_000_000n).toString(),
    podSandboxStatus,
    containersStatuses,
  };
}
