/**
 * What a CRI endpoint pushes: GetContainerEvents as SandboxEvents, and the channel leaving READY (a daemon that exits
 * closes its socket), noticed without any RPC.
 */
import { connectivityState, type ClientReadableStream } from '@grpc/grpc-js';
import { NamespaceMode } from '../../../shared/domain/config';
import type { PodscopeError } from '../../../shared/domain/errors';
import type { SandboxEvent } from '../../../shared/domain/sandbox';
import * as pb from '../generated/runtime_v1';
import { fromGrpcError } from '../errors';
import { podSandboxToSummary } from './decode-status';
import type { CriEndpointApi } from './endpoint-api-types';
import type { EndpointLink } from './endpoint-link';

type EventFeeds = Pick<CriEndpointApi, 'subscribe' | 'onConnectionLost'>;

export function eventFeeds(link: EndpointLink): EventFeeds {
  const { connected } = link;
  return {
    subscribe(listener, onError, onContainerEvent) {
      let cancelled = false;
      let stream: ClientReadableStream<pb.ContainerEventResponse> | undefined;
      connected().then(
        (conn) => {
          if (cancelled) return;
          stream = conn.events();
          forwardSandboxEvents(stream, listener, onContainerEvent);
          stream.on('error', (e) => {
            if (!cancelled) onError?.(fromGrpcError(e, conn.address));
          });
        },
        (e: unknown) => onError?.(e as PodscopeError),
      );
      return () => {
        cancelled = true;
        stream?.cancel();
      };
    },
    onConnectionLost(listener) {
      let stopped = false;
      connected().then(
        (conn) => {
          const channel = conn.client.getChannel();
          const watch = () => {
            if (stopped) return;
            try {
              const state = channel.getConnectivityState(false);
              channel.watchConnectivityState(state, Infinity, () => {
                if (stopped) return;
                if (state === connectivityState.READY && channel.getConnectivityState(false) !== connectivityState.READY) listener();
                watch();
              });
            } catch {
              // the channel was shut down (the endpoint was closed): nothing left to watch
            }
          };
          watch();
        },
        () => undefined,
      );
      return () => {
        stopped = true;
      };
    },
  };
}

/** CRI container events ⇒ SandboxEvents. containerd also reports app containers; a sandbox's own events have container id = sandbox id. */
function forwardSandboxEvents(
  stream: ClientReadableStream<pb.ContainerEventResponse>,
  listener: (e: SandboxEvent) => void,
  onContainerEvent?: () => void,
): void {
  const T = pb.ContainerEventType;
  stream.on('data', (ev: pb.ContainerEventResponse) => {
    const st = ev.podSandboxStatus;
    // an app container's event (its id is not the sandbox's): the caller re-lists containers if it cares
    if (st && st.id !== ev.containerId) onContainerEvent?.();
    if (!st || st.id !== ev.containerId) return;
    const summary = podSandboxToSummary(st);
    summary.ip = st.network?.ip ?? '';
    summary.additionalIps = (st.network?.additionalIps ?? []).map((a) => a.ip);
    summary.hostNetwork = st.linux?.namespaces?.options?.network === NamespaceMode.NODE;
    if (ev.containerEventType === T.CONTAINER_CREATED_EVENT) listener({ type: 'sandbox.added', id: st.id, summary });
    else if (ev.containerEventType === T.CONTAINER_DELETED_EVENT) listener({ type: 'sandbox.removed', id: st.id });
    else listener({ type: 'sandbox.changed', id: st.id, summary });
  });
}
