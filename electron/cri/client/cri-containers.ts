/** The container verbs over CRI (CreateContainer … ReopenContainerLog), and the two single-call reads the follower uses. */
import { PodSandboxConfigSchema, formatIssues } from '../../../shared/domain/config';
import { PodscopeError, invalidArgument } from '../../../shared/domain/errors';
import {
  ContainerConfigSchema,
  type ContainerFilter,
  type ContainerStats,
  type ContainerStatusView,
  type ContainerSummary,
  type ExecSyncResult,
} from '../../../shared/domain/container';
import { z } from 'zod';
import * as pb from '../generated/runtime_v1';
import { TraceEntrySchema } from './peer-schemas';
import { configToProto } from '../convert/config';
import {
  containerConfigToProto,
  containerFromProto,
  containerStateToProto,
  resourcesToProto,
  statsFromProto,
  statusFromProto,
} from '../convert/container';
import type { CriConnection } from './connection';
import type { CriEndpointApi } from './endpoint-api-types';
import { forEachLimited, LIST_STATUS_CONCURRENCY, type EndpointLink } from './endpoint-link';

type ContainerVerbs = Pick<
  CriEndpointApi,
  | 'createContainer'
  | 'startContainer'
  | 'stopContainer'
  | 'removeContainer'
  | 'containerStatus'
  | 'listContainers'
  | 'listContainersOnce'
  | 'exitOf'
  | 'execSync'
  | 'updateContainerResources'
  | 'containerStats'
  | 'listContainerStats'
  | 'reopenContainerLog'
>;

/** what a runtime's verbose info may hold (a Podscope peer's carries its own view under `podscope`) */
interface ContainerInfo {
  sandboxID?: string;
  pid?: number;
  config?: ContainerStatusView['config'];
  runtimeSpec?: unknown;
  podscope?: Partial<ContainerStatusView>;
}

async function containerStatusView(conn: CriConnection, id: string): Promise<ContainerStatusView> {
  const res = await conn.call((c) => c.containerStatus, { containerId: id, verbose: true });
  if (!res.status) throw new PodscopeError('Internal', `CRI endpoint ${conn.socketPath} sent a ContainerStatus without a status`);
  let info: ContainerInfo = {};
  try {
    info = JSON.parse(res.info.info ?? '{}') as ContainerInfo;
  } catch {
    // another runtime's info may not be JSON; the status alone still says a lot
  }
  const view = statusFromProto(res.status, info.sandboxID ?? '');
  if (info.pid) view.pid = info.pid;
  if (info.runtimeSpec !== undefined) view.ociSpec = info.runtimeSpec;
  if (info.config && typeof info.config === 'object' && 'metadata' in info.config) view.config = info.config;
  const p = info.podscope;
  // a Podscope from before the rename sends conmon's pid as shimPid
  const monitorPid = p?.monitorPid ?? (p as { shimPid?: number } | undefined)?.shimPid;
  if (p)
    Object.assign(view, {
      seccomp: p.seccomp ?? '',
      apparmor: p.apparmor ?? '',
      stopSignal: p.stopSignal ?? '',
      ...(monitorPid !== undefined && { monitorPid }),
      name: p.name ?? view.name,
    });
  // a Podscope peer's CreateContainer/StartContainer steps; anything else there is left out rather than trusted
  const steps = z.array(TraceEntrySchema).safeParse(p?.trace);
  if (steps.success) view.trace = steps.data;
  return view;
}

async function listFiltered(conn: CriConnection, filter?: ContainerFilter): Promise<ContainerSummary[]> {
  const res = await conn.call((c) => c.listContainers, {
    filter: pb.ContainerFilter.fromPartial({
      id: filter?.id ?? '',
      podSandboxId: filter?.podSandboxId ?? '',
      labelSelector: filter?.labelSelector ?? {},
      ...(filter?.state && { state: { state: containerStateToProto(filter.state) } }),
    }),
  });
  const items = res.containers.map(containerFromProto);
  // Container has no exit code or reason: a (non-verbose) status per exited one fills them in, bounded
  await forEachLimited(
    items.filter((c) => c.state === 'CONTAINER_EXITED'),
    LIST_STATUS_CONCURRENCY,
    async (c) => {
      const st = (await conn.call((x) => x.containerStatus, { containerId: c.id, verbose: false }).catch(() => undefined))?.status;
      if (st) Object.assign(c, { exitCode: st.exitCode, reason: st.reason });
    },
  );
  return items;
}

export function containerVerbs(link: EndpointLink): ContainerVerbs {
  return { ...containerLifecycle(link), ...containerOps(link) };
}

type ContainerOp = 'execSync' | 'updateContainerResources' | 'containerStats' | 'listContainerStats' | 'reopenContainerLog';

/** create, start, stop, remove, status and lists */
function containerLifecycle(link: EndpointLink): Omit<ContainerVerbs, ContainerOp> {
  const { connected } = link;
  return {
    async createContainer(req) {
      const conn = await connected();
      const parsed = ContainerConfigSchema.safeParse(req.config);
      if (!parsed.success) throw invalidArgument(`invalid container config: ${formatIssues(parsed.error).join('; ')}`);
      const sandboxConfig = req.sandboxConfig ? PodSandboxConfigSchema.safeParse(req.sandboxConfig) : undefined;
      const res = await conn.call((c) => c.createContainer, {
        podSandboxId: req.podSandboxId,
        config: containerConfigToProto(parsed.data),
        sandboxConfig: sandboxConfig?.success ? configToProto(sandboxConfig.data) : undefined,
      });
      return { id: res.containerId };
    },
    async startContainer(id) {
      await (await connected()).call((c) => c.startContainer, { containerId: id });
    },
    async stopContainer(id, timeoutSeconds) {
      // the client deadline must outlast the stop timeout (crictl adds its own timeout the same way)
      const conn = await connected();
      await conn.call((c) => c.stopContainer, { containerId: id, timeout: String(timeoutSeconds) }, (timeoutSeconds + 30) * 1000);
    },
    async removeContainer(id) {
      await (await connected()).call((c) => c.removeContainer, { containerId: id });
    },
    async containerStatus(id) {
      return containerStatusView(await connected(), id);
    },
    async listContainers(filter?: ContainerFilter) {
      return listFiltered(await connected(), filter);
    },
    async listContainersOnce() {
      const res = await (await connected()).call((c) => c.listContainers, { filter: undefined });
      return res.containers.map(containerFromProto);
    },
    async exitOf(id) {
      const st = (await (await connected()).call((c) => c.containerStatus, { containerId: id, verbose: false })).status;
      return { exitCode: st?.exitCode ?? 0, reason: st?.reason ?? '' };
    },
  };
}

/** the verbs on a running container: exec, resources, stats, log reopening */
function containerOps(link: EndpointLink): Pick<CriEndpointApi, ContainerOp> {
  const { connected } = link;
  return {
    async execSync(id, cmd, timeoutSeconds): Promise<ExecSyncResult> {
      const conn = await connected();
      const deadline = timeoutSeconds > 0 ? (timeoutSeconds + 30) * 1000 : undefined;
      const res = await conn.call((c) => c.execSync, { containerId: id, cmd, timeout: String(timeoutSeconds) }, deadline);
      return { stdout: new Uint8Array(res.stdout), stderr: new Uint8Array(res.stderr), exitCode: res.exitCode };
    },
    async updateContainerResources(id, resources) {
      const conn = await connected();
      await conn.call((c) => c.updateContainerResources, { containerId: id, linux: resourcesToProto(resources), annotations: {} });
    },
    async containerStats(id): Promise<ContainerStats> {
      const res = await (await connected()).call((c) => c.containerStats, { containerId: id });
      if (!res.stats) throw new PodscopeError('NotFound', `no stats for container ${id}`);
      return statsFromProto(res.stats);
    },
    async listContainerStats(filter) {
      const res = await (
        await connected()
      ).call((c) => c.listContainerStats, {
        filter: pb.ContainerStatsFilter.fromPartial({
          id: filter?.id ?? '',
          podSandboxId: filter?.podSandboxId ?? '',
          labelSelector: filter?.labelSelector ?? {},
        }),
      });
      return res.stats.map((s) => statsFromProto(s));
    },
    async reopenContainerLog(id) {
      await (await connected()).call((c) => c.reopenContainerLog, { containerId: id });
    },
  };
}
