/**
 * What each IPC channel does: one line per channel, forwarding to the endpoint's service (the engine, a CRI
 * endpoint), the stream sessions, the lab or the endpoint registry. Nothing here validates: the router has checked
 * the sender and parsed the request against the channel map before a handler runs.
 */
import type { ChannelName, ParsedRequestOf } from '../../shared/ipc/channels';
import type { PushedEvent } from '../../shared/ipc/events';
import type { ContainerFilter } from '../../shared/domain/container';
import { PodscopeError, notSupported } from '../../shared/domain/errors';
import type { EndpointRegistry } from '../../shared/domain/endpoints';
import type { CriEndpointRegistry } from '../endpoints/registry';
import { ownerOf, type SenderInfo } from './sender';
import type { StreamSessions } from './stream-sessions';

/** every endpoint, "local" included (see electron/endpoints), with the parts only some endpoints have */
export type RouterEndpoints = EndpointRegistry &
  Pick<CriEndpointRegistry, 'images' | 'streaming' | 'lab' | 'measurements' | 'recordedAdd'> &
  Partial<Pick<CriEndpointRegistry, 'showing' | 'forgetViewer' | 'discoverNodes' | 'subscribeMeasurements' | 'probeMatrix'>>;

export type Handlers = { [C in ChannelName]: (req: ParsedRequestOf<C>, sender: SenderInfo) => Promise<unknown> };

export function channelHandlers({
  endpoints,
  sessions,
  emit,
}: {
  endpoints: RouterEndpoints;
  sessions: StreamSessions;
  emit: (e: PushedEvent, target?: string) => void;
}): Handlers {
  const api = (id: string) => endpoints.api(id);
  // what only some endpoints have comes from the registry, which refuses it with the one NotSupportedError
  const lab = (id: string) => endpoints.lab(id);
  const measurements = (id: string) => endpoints.measurements(id);
  const images = (id: string) => endpoints.images(id);
  async function broadcastEndpoints() {
    try {
      emit({ kind: 'endpoints.changed', endpoints: await endpoints.list() });
    } catch {
      // listing failed; the renderer refetches on its own schedule
    }
  }
  return {
    'sandbox.run': (r) => api(r.endpointId).run(r.request),
    'sandbox.stop': (r) => api(r.endpointId).stop(r.id),
    'sandbox.remove': (r) => api(r.endpointId).remove(r.id),
    'sandbox.status': (r) => api(r.endpointId).status(r.id),
    'sandbox.list': (r) => api(r.endpointId).list(r.filter),
    'sandbox.cniConfig': (r) => api(r.endpointId).cniConfig(),
    'sandbox.preview': (r) => api(r.endpointId).preview(r.request),
    'sandbox.runtimeConditions': (r) => api(r.endpointId).runtimeConditions(),
    'sandbox.info': (r) => api(r.endpointId).info(),
    'sandbox.live': (r) => api(r.endpointId).live(r.id),
    'sandbox.probe': (r) =>
      api(r.endpointId).probe(
        r.id,
        r.trace || r.dnsName ? { ...(r.trace ? { trace: true } : {}), ...(r.dnsName ? { dnsName: r.dnsName } : {}) } : undefined,
      ),
    'sandbox.lastProbe': (r) => api(r.endpointId).lastProbe(r.id),
    'sandbox.throughput': (r) =>
      measurements(r.endpointId).throughput(r.id, r.durationMs === undefined ? {} : { durationMs: r.durationMs }),
    'sandbox.topology': (r) => measurements(r.endpointId).topology(r.id),
    'network.topology': (r) => measurements(r.endpointId).networkTopology(r.network),
    'sandbox.cniCheck': (r) => measurements(r.endpointId).cniCheck(r.id),
    'network.cniStatus': (r) => measurements(r.endpointId).cniStatus(),
    'containers.list': (r) => api(r.endpointId).listContainers(r.filter as ContainerFilter | undefined),
    'containers.status': (r) => api(r.endpointId).containerStatus(r.id),
    'containers.create': async (r) => {
      const c = api(r.endpointId);
      const { id } = await c.createContainer({ podSandboxId: r.podSandboxId, config: r.config });
      if (!r.start) return { id, started: false };
      await c.startContainer(id);
      return { id, started: true };
    },
    'containers.start': (r) => api(r.endpointId).startContainer(r.id),
    'containers.stop': (r) => api(r.endpointId).stopContainer(r.id, r.timeoutSeconds),
    'containers.remove': (r) => api(r.endpointId).removeContainer(r.id),
    'images.list': (r) => images(r.endpointId).list(),
    'images.inspect': (r) => images(r.endpointId).inspect(r.ref),
    'images.pull': (r, s) =>
      images(r.endpointId).pull(
        r.ref,
        r.requestId === undefined
          ? {}
          : {
              onProgress: (progress) =>
                emit({ kind: 'image.pull', endpointId: r.endpointId, requestId: r.requestId!, progress }, ownerOf(s)),
            },
      ),
    'images.remove': (r) => images(r.endpointId).remove(r.ref),
    'images.load': (r) => images(r.endpointId).load(r.path),
    'stream.exec': async (r, s) => sessions.open(ownerOf(s), r),
    'stream.attach': async (r, s) => sessions.open(ownerOf(s), { ...r, containerId: r.containerId }),
    'stream.write': async (r, s) => sessions.write(ownerOf(s), r.sessionId, Buffer.from(r.data, r.encoding)),
    'stream.closeStdin': async (r, s) => sessions.closeStdin(ownerOf(s), r.sessionId),
    'stream.resize': async (r, s) => sessions.resize(ownerOf(s), r.sessionId, r.size),
    'stream.ack': async (r, s) => sessions.ack(ownerOf(s), r.sessionId, r.bytes),
    'stream.close': (r, s) => sessions.close(ownerOf(s), r.sessionId),
    'logs.follow': (r, s) => sessions.followLogs(ownerOf(s), r),
    'portForward.open': (r, s) => sessions.openForward(ownerOf(s), r),
    'portForward.close': (r, s) => sessions.closeForward(ownerOf(s), r.id),
    'portForward.list': async (_r, s) => sessions.listForwards(ownerOf(s)),
    'lab.validate': (r) => lab(r.endpointId).validate(r.text),
    'lab.run': (r) => lab(r.endpointId).run(r.request),
    'lab.list': (r) => lab(r.endpointId).list(),
    'lab.get': (r) => lab(r.endpointId).get(r.id),
    'lab.diff': async (r) => {
      // b on a CRI endpoint: that pod's ADD as libcni's cache keeps it, against a run of this engine's lab
      const onEndpoint = /^endpoint:([^:]+):(.+)$/.exec(r.b);
      if (!onEndpoint) return lab(r.endpointId).diff(r.a, r.b);
      const l = lab(r.endpointId);
      if (!l.diffWithAdd) throw new PodscopeError('Unimplemented', 'this lab cannot compare with a pod of another endpoint');
      return l.diffWithAdd(r.a, await endpoints.recordedAdd(onEndpoint[1]!, onEndpoint[2]!));
    },
    'lab.save': (r) => lab(r.endpointId).save(r.request),
    'endpoints.list': () => endpoints.list(),
    'endpoints.add': async (r) => {
      const view = await endpoints.add(r);
      void broadcastEndpoints();
      return view;
    },
    'endpoints.remove': async (r) => {
      await endpoints.remove(r.id);
      void broadcastEndpoints();
    },
    'endpoints.rename': async (r) => {
      const view = await endpoints.rename(r.id, r.label);
      void broadcastEndpoints();
      return view;
    },
    'endpoints.showing': async (r, s) => endpoints.showing?.(r.endpointId, ownerOf(s), r.ids),
    // a registry without discovery (a test's) finds none
    'nodes.discover': async () => (endpoints.discoverNodes ? endpoints.discoverNodes() : { nodes: [], refused: [] }),
    'nodes.matrix': async (r) => {
      if (!endpoints.probeMatrix) throw notSupported('matrix', 'this host measures no nodes');
      return endpoints.probeMatrix(r.endpointIds, { trace: r.trace });
    },
  };
}
