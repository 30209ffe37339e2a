/**
 * The pod sandbox verbs over CRI (RunPodSandbox, Stop, Remove, PodSandboxStatus, ListPodSandbox), and what CRI cannot
 * carry refused as Unimplemented rather than approximated: a per-request IP preference, config previews, the kernel's
 * live view and the reachability probe (both need the pod's netns on this host).
 */
import { PodSandboxConfigSchema, formatIssues, NamespaceMode } from '../../../shared/domain/config';
import { invalidArgument } from '../../../shared/domain/errors';
import type { RowNetworkFacts, SandboxFilter, SandboxStatus, SandboxSummary } from '../../../shared/domain/sandbox';
import * as pb from '../generated/runtime_v1';
import { configToProto } from '../convert/config';
import { stateToProto } from '../convert/sandbox';
import type { CriConnection } from './connection';
import { decodeSandboxStatus, podSandboxToSummary } from './decode-status';
import type { ForeignSandbox } from '../../engine/api';
import { VERBOSE_INFO_KEY } from '../verbose-info';
import type { CriEndpointApi } from './endpoint-api-types';
import { describeRuntime, forEachLimited, LIST_STATUS_CONCURRENCY, unimplemented, type EndpointLink } from './endpoint-link';

type SandboxVerbs = Pick<
  CriEndpointApi,
  'run' | 'stop' | 'remove' | 'status' | 'list' | 'listOnce' | 'networkOf' | 'live' | 'probe' | 'lastProbe' | 'preview' | 'foreignSandboxes'
>;

const statusOf = (conn: CriConnection, id: string, verbose: boolean) => conn.call((c) => c.podSandboxStatus, { podSandboxId: id, verbose });

/**
 * The facts a list row needs that ListPodSandbox lacks, from one verbose PodSandboxStatus: the IPs and host network
 * from the status itself, the host ports from the pod config the verbose info carries (containerd's `info.config`,
 * a Podscope peer's own section). A verbose part that does not decode costs only the host ports.
 */
function rowFacts(res: pb.PodSandboxStatusResponse, conn: CriConnection): RowNetworkFacts {
  const st = res.status;
  const plain = {
    ip: st?.network?.ip ?? '',
    additionalIps: (st?.network?.additionalIps ?? []).map((a) => a.ip),
    hostNetwork: st?.linux?.namespaces?.options?.network === NamespaceMode.NODE,
    hostPorts: [],
  };
  try {
    return { ...plain, hostPorts: decodeSandboxStatus(res, conn.version.runtimeName, conn.socketPath).hostPorts };
  } catch {
    return plain;
  }
}

async function listFiltered(conn: CriConnection, filter?: SandboxFilter): Promise<SandboxSummary[]> {
  const res = await conn.call((c) => c.listPodSandbox, {
    filter: pb.PodSandboxFilter.fromPartial({
      id: filter?.id ?? '',
      labelSelector: filter?.labelSelector ?? {},
      ...(filter?.state && { state: { state: stateToProto(filter.state) } }),
    }),
  });
  const items = res.items
    .filter((p) => filter?.name === undefined || p.metadata?.name === filter.name)
    .filter((p) => filter?.namespace === undefined || p.metadata?.namespace === filter.namespace)
    .map(podSandboxToSummary);
  // ListPodSandbox carries no network facts: fill ip / host network / host ports from a status each,
  // at most LIST_STATUS_CONCURRENCY at a time (a runtime with hundreds of pods is not sent hundreds at once).
  await forEachLimited(items, LIST_STATUS_CONCURRENCY, async (s) => {
    try {
      Object.assign(s, rowFacts(await statusOf(conn, s.id, true), conn));
    } catch {
      // removed between list and status: keep the list facts
    }
  });
  return items;
}

export function sandboxVerbs(link: EndpointLink): SandboxVerbs {
  const { connected } = link;
  return {
    async run(req) {
      const conn = await connected();
      if (req.ipPreference !== undefined) throw unimplemented('ipPreference', 'a per-sandbox IP preference', describeRuntime(conn));
      const parsed = PodSandboxConfigSchema.safeParse(req.config);
      if (!parsed.success) throw invalidArgument(`invalid sandbox config: ${formatIssues(parsed.error).join('; ')}`);
      const res = await conn.call((c) => c.runPodSandbox, { config: configToProto(parsed.data), runtimeHandler: req.runtimeHandler ?? '' });
      return { id: res.podSandboxId };
    },
    async stop(id) {
      await (await connected()).call((c) => c.stopPodSandbox, { podSandboxId: id });
    },
    async remove(id) {
      await (await connected()).call((c) => c.removePodSandbox, { podSandboxId: id });
    },
    async status(id): Promise<SandboxStatus> {
      const conn = await connected();
      return decodeSandboxStatus(await statusOf(conn, id, true), conn.version.runtimeName, conn.socketPath);
    },
    async list(filter?: SandboxFilter) {
      return listFiltered(await connected(), filter);
    },
    async listOnce() {
      const res = await (await connected()).call((c) => c.listPodSandbox, { filter: undefined });
      return res.items.map(podSandboxToSummary);
    },
    async networkOf(id) {
      const conn = await connected();
      return rowFacts(await statusOf(conn, id, true), conn);
    },
    async foreignSandboxes(ids?: string[]): Promise<ForeignSandbox[]> {
      const conn = await connected();
      const wanted = ids ?? (await conn.call((c) => c.listPodSandbox, { filter: undefined })).items.map((p) => p.id);
      const out: ForeignSandbox[] = [];
      await forEachLimited(wanted, LIST_STATUS_CONCURRENCY, async (id) => {
        let res: pb.PodSandboxStatusResponse;
        try {
          res = await statusOf(conn, id, true);
        } catch {
          return; // removed between list and status
        }
        const raw = res.info[VERBOSE_INFO_KEY];
        let verbose: unknown;
        try {
          verbose = raw ? JSON.parse(raw) : undefined;
        } catch {
          verbose = undefined; // the decode below names a malformed document
        }
        out.push({
          runtimeName: conn.version.runtimeName,
          status: decodeSandboxStatus(res, conn.version.runtimeName, conn.socketPath),
          ...(verbose !== undefined && { verbose }),
        });
      });
      return out;
    },
    async live() {
      // the kernel view needs the netns on this host and the engine's own records; CRI carries neither
      throw unimplemented('liveNetwork', "the kernel's live view of a pod network", describeRuntime(await connected()));
    },
    async probe() {
      // the probe enters the pod's netns on this host, which CRI does not expose
      throw unimplemented('probe', 'a reachability probe', describeRuntime(await connected()));
    },
    async lastProbe() {
      return null;
    },
    async preview() {
      throw unimplemented('preview', 'a config preview', describeRuntime(await connected()));
    },
  };
}
