/**
 * Log follow sessions: a container's CRI log file read by the engine's log reader (rotation, partial records, tail
 * from the end) on any runtime's file on this host, sent as `logs.lines` batches under the session's flow window.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import { LOG_BATCH_LINES, type LogLine } from '../../../shared/domain/streams';
import type { EndpointApi } from '../../../shared/domain/endpoints';
import type { PushedEvent } from '../../../shared/ipc/events';
import { openContainerLogReads } from '../../engine/api';
import { waitWindow, type SessionTable } from './session-table';

export interface LogFollowDeps {
  containers(endpointId: string): EndpointApi;
  emit(event: PushedEvent, owner: string): void;
  /** log poll interval (ms), tests shorten it */
  logPollMs?: number;
}

export async function followLogs(
  table: SessionTable,
  deps: LogFollowDeps,
  owner: string,
  req: { endpointId: string; containerId: string; tail: number; follow: boolean },
): Promise<{ sessionId: string; logPath: string }> {
  const api = deps.containers(req.endpointId);
  const status = await api.containerStatus(req.containerId);
  if (!status.logPath)
    throw new PodscopeError(
      'FailedPrecondition',
      `container ${status.metadata.name} has no log file: its pod has no log_directory or the container no log_path`,
    );
  const s = table.start(owner, 'logs');
  const onLines = async (lines: LogLine[]) => {
    if (s.abort.signal.aborted) return;
    s.window.inflight += lines.length;
    deps.emit({ kind: 'logs.lines', sessionId: s.id, lines }, s.owner);
    await waitWindow(s.window);
  };
  const containerId = status.id;
  // a follow ends once the container has exited and its file is drained, like crictl logs -f
  const live = async () => {
    const st = await api.containerStatus!(containerId);
    return st.state === 'CONTAINER_CREATED' || st.state === 'CONTAINER_RUNNING';
  };
  const reads = await openContainerLogReads(
    status.logPath,
    {
      tail: req.tail,
      follow: req.follow,
      signal: s.abort.signal,
      ...(deps.logPollMs !== undefined && { pollMs: deps.logPollMs }),
    },
    live,
  );
  s.done = sendInBatches(reads, onLines, s.abort.signal).then(
    () => table.finish(s, {}),
    (error) => table.finish(s, { error }),
  );
  return { sessionId: s.id, logPath: status.logPath };
}

/** Sends each read's lines in batches of at most LOG_BATCH_LINES, waiting for the receiver between batches. */
async function sendInBatches(reads: AsyncGenerator<LogLine[]>, onLines: (lines: LogLine[]) => Promise<void>, signal: AbortSignal) {
  try {
    for await (const lines of reads) {
      for (let i = 0; i < lines.length && !signal.aborted; i += LOG_BATCH_LINES) await onLines(lines.slice(i, i + LOG_BATCH_LINES));
      if (signal.aborted) break;
    }
  } finally {
    await reads.return(undefined);
  }
}
