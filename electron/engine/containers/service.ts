/**
 * The container half of the engine: the verbs (one file each) over one ContainerContext. SandboxEngine owns it,
 * hands it the sandbox store and locks, and calls stopSandboxContainers/removeSandboxContainers from StopPodSandbox
 * and RemovePodSandbox.
 */
import { access } from 'node:fs/promises';
import { readFile, realpath } from 'node:fs/promises';
import type {
  ContainerApi,
  ContainerEvent,
  ContainerFilter,
  CreateContainerRequest,
  LinuxContainerResourcesInput,
} from '../../../shared/domain/container';
import { mountContaining, propagationOf, readMountInfo } from '../netns/mountinfo';
import { capabilitiesFromStatus } from '../runtime/container-spec';
import { KeyedMutex } from '../common/keyed-mutex';
import { NameRegistrar } from '../common/name-registrar';
import type { CgroupReader } from '../runtime/cgroups';
import type { ContainerContext, ContainerHost } from './context';
import type { ContainerImages } from './deps';
import { createContainer } from './create';
import { execSync } from './exec-sync';
import { observeAllExits } from './exit';
import { listContainers } from './list';
import { recoverContainers } from './recover';
import { removalsFinished, removeContainer, removeSandboxContainers } from './remove';
import { reopenContainerLog } from './reopen-log';
import type { ContainerRuntime } from '../runtime/container-runtime';
import { startContainer } from './start';
import { containerStats, listContainerStats } from './stats';
import { containerStatus } from './status';
import { stopContainer, stopSandboxContainers } from './stop';
import { ContainerStore } from './store';
import { updateContainerResources } from './update-resources';
import type { ContainerLogOptions } from './log-reader';
import type { ContainerStreaming } from './streaming';
import { containerLogs, EngineStreaming } from './streaming-engine';

export interface ContainerDeps {
  /** the engine's image store (service/ hands it over) */
  images: ContainerImages;
  /** the default handler's runtime (runc) */
  runtime: ContainerRuntime;
  /** per runtime_handler name, for pods that name one (absent: every pod runs on `runtime`) */
  runtimes?: Partial<Record<string, ContainerRuntime>>;
  cgroups: CgroupReader;
  host?: ContainerHost;
}

let heldCaps: Promise<string[] | undefined> | undefined;

export const hostChecks: ContainerHost = {
  pathExists: (path) =>
    access(path).then(
      () => true,
      () => false,
    ),
  apparmorEnabled: () =>
    readFile('/sys/module/apparmor/parameters/enabled', 'utf8').then(
      (t) => t.trim() === 'Y',
      () => false,
    ),
  mountPropagation: async (path) => {
    try {
      const m = mountContaining(await readMountInfo(), await realpath(path));
      return m && { mountPoint: m.mountPoint, propagation: propagationOf(m) };
    } catch {
      return undefined;
    }
  },
  heldCapabilities: () => {
    // read once, as containerd does at start-up: an engine's capabilities do not change while it runs
    heldCaps ??= readFile('/proc/self/status', 'utf8').then(capabilitiesFromStatus, () => undefined);
    return heldCaps;
  },
};

export class ContainerService implements ContainerApi {
  readonly ctx: ContainerContext;
  /** exec/attach/port-forward with live streams (streaming.ts) */
  readonly streaming: ContainerStreaming;

  constructor(
    base: Omit<ContainerContext, 'store' | 'names' | 'locks' | 'rootfs' | 'images' | 'runtime' | 'runtimes' | 'cgroups' | 'host' | 'emit'>,
    deps: ContainerDeps,
    emit: (e: ContainerEvent) => void,
  ) {
    this.ctx = {
      ...base,
      images: deps.images,
      runtime: deps.runtime,
      runtimes: deps.runtimes ?? {},
      cgroups: deps.cgroups,
      host: deps.host ?? hostChecks,
      store: new ContainerStore(base.options.stateDir),
      names: new NameRegistrar('container'),
      locks: new KeyedMutex(),
      rootfs: new Map(),
      emit,
    };
    this.streaming = new EngineStreaming(this.ctx);
  }

  /** the container's log lines (crictl logs: follow, since, tail, stream) */
  logs(id: string, opts: ContainerLogOptions = {}) {
    return containerLogs(this.ctx, id, opts);
  }

  recover(opts: { readOnly?: boolean } = {}): Promise<string[]> {
    return recoverContainers(this.ctx, opts);
  }

  /** one round of the exit watcher */
  /** the background exit poll; `exact`: the exact look for every running container (exit.ts observeAllExits) */
  poll(opts: { exact?: boolean } = {}): Promise<void> {
    return observeAllExits(this.ctx, opts);
  }

  stopAll(sandboxId: string): Promise<void> {
    return stopSandboxContainers(this.ctx, sandboxId);
  }

  removeAll(sandboxId: string): Promise<void> {
    return removeSandboxContainers(this.ctx, sandboxId);
  }

  /** the runtime state, rootfs and directories of removed containers are gone (they go after the reply) */
  removalsFinished(): Promise<void> {
    return removalsFinished(this.ctx);
  }

  createContainer(req: CreateContainerRequest) {
    return createContainer(this.ctx, req);
  }
  startContainer(id: string) {
    return startContainer(this.ctx, id);
  }
  stopContainer(id: string, timeoutSeconds: number) {
    return stopContainer(this.ctx, id, timeoutSeconds);
  }
  removeContainer(id: string) {
    return removeContainer(this.ctx, id);
  }
  containerStatus(id: string) {
    return containerStatus(this.ctx, id);
  }
  listContainers(filter?: ContainerFilter) {
    return listContainers(this.ctx, filter);
  }
  execSync(id: string, cmd: string[], timeoutSeconds: number) {
    return execSync(this.ctx, id, cmd, timeoutSeconds);
  }
  updateContainerResources(id: string, resources: LinuxContainerResourcesInput) {
    return updateContainerResources(this.ctx, id, resources);
  }
  containerStats(id: string) {
    return containerStats(this.ctx, id);
  }
  listContainerStats(filter?: Omit<ContainerFilter, 'state'>) {
    return listContainerStats(this.ctx, filter);
  }
  reopenContainerLog(id: string) {
    return reopenContainerLog(this.ctx, id);
  }

  /**
   * The ports the pod's containers declare: their images' ExposedPorts ("80/tcp", "53/udp"; a bare "8080" is TCP), in
   * any state, since a declared port is what a peer would connect to. An image no longer in the store declares nothing.
   */
  async declaredPorts(sandboxId: string): Promise<Array<{ port: number; proto: string; container: string }>> {
    const out: Array<{ port: number; proto: string; container: string }> = [];
    for (const rec of this.ctx.store.ofSandbox(sandboxId)) {
      const image = await this.ctx.images.resolve(rec.imageId).catch(() => undefined);
      for (const key of Object.keys(image?.config.ExposedPorts ?? {})) {
        const m = /^(\d+)(?:\/(tcp|udp|sctp))?$/i.exec(key.trim());
        if (m) out.push({ port: Number(m[1]), proto: (m[2] ?? 'tcp').toLowerCase(), container: rec.config.metadata.name });
      }
    }
    return out;
  }
}
