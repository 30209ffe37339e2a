/**
 * GetContainerEvents: the engine's sandbox events as CRI container events, with container id = sandbox id as
 * containerd does for sandboxes (FACTS C3 step 12): added ⇒ CREATED, the CRI state turning READY ⇒ STARTED,
 * READY ⇒ NOTREADY ⇒ STOPPED, removed ⇒ DELETED. Progress and CNI-config events have no CRI equivalent.
 * Each stream tracks the last state it saw per sandbox so it only reports transitions.
 */
import type { ServerWritableStream } from '@grpc/grpc-js';
import type { SandboxEvent, SandboxSummary } from '../../../shared/domain/sandbox';
import * as pb from '../generated/runtime_v1';
import { createdAtNs, stateToProto } from '../convert/sandbox';
import type { CriEngine } from './handler';

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
export function translateSandboxEvent(e: SandboxEvent, seen: Map<string, SandboxSummary>): Array<{ type: pb.ContainerEventType; summary: SandboxSummary }> {
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

/** Serves one stream until the client cancels or the server closes; returns the unsubscribe for the server. */
export async function serveContainerEvents(engine: CriEngine, call: EventStream): Promise<() => void> {
  const seen = new Map<string, SandboxSummary>();
  const send = (e: SandboxEvent) => {
    for (const { type, summary } of translateSandboxEvent(e, seen)) {
      call.write({
        containerId: summary.id,
        containerEventType: type,
        createdAt: (BigInt(Date.now()) * 1_000_000n).toString(),
        podSandboxStatus: summaryStatus(summary),
      });
    }
  };
  // Subscribe before listing so nothing is lost in between; events that arrive meanwhile wait for the list.
  let pending: SandboxEvent[] | undefined = [];
  const unsubscribe = engine.subscribe((e) => (pending ? pending.push(e) : send(e)));
  let existing: SandboxSummary[];
  try {
    existing = await engine.list();
  } catch (e) {
    unsubscribe();
    throw e;
  }
  const queued = pending;
  // Sandboxes that existed before the stream opened are known, so their next change is a transition, not a CREATED;
  // one whose "added" is still queued is left to that event.
  const addedMeanwhile = new Set(queued.filter((e) => e.type === 'sandbox.added').map((e) => e.id));
  for (const s of existing) if (!addedMeanwhile.has(s.id)) seen.set(s.id, s);
  pending = undefined;
  for (const e of queued) send(e);
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    unsubscribe();
  };
  call.on('cancelled', finish);
  call.on('close', finish);
  call.on('error', finish);
  return () => {
    finish();
    call.end();
  };
}
