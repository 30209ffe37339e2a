/** What the container verbs share: OS touch points (each behind an interface) and the engine's state. */
import type { ContainerEvent } from '../../../shared/domain/container';
import type { EngineOptions } from '../common/options';
import type { KeyedMutex } from '../common/keyed-mutex';
import type { NameRegistrar } from '../common/name-registrar';
import type { ContainerImages, ContainerPods, ContainerRootfs } from './deps';
import type { CgroupReader } from '../runtime/cgroups';
import type { ContainerRuntime } from '../runtime/container-runtime';
import type { ContainerStore } from './store';

/** Host checks CreateContainer makes (real: node:fs and /sys; fake in tests). */
export interface ContainerHost {
  /** whether a mount's host path exists */
  pathExists(path: string): Promise<boolean>;
  /** /sys/module/apparmor/parameters/enabled says Y */
  apparmorEnabled(): Promise<boolean>;
  /** the propagation of the mount a host path lives on (undefined: cannot tell, so no check) */
  mountPropagation?(path: string): Promise<{ mountPoint: string; propagation: 'shared' | 'slave' | 'private' } | undefined>;
  /** the engine process's effective capabilities (what a privileged container can get); undefined ⇒ all */
  heldCapabilities?(): Promise<readonly string[] | undefined>;
}

export interface ContainerContext {
  options: EngineOptions;
  /** the pods containers go into (id or unique prefix; a typed NotFound) */
  pods: ContainerPods;
  images: ContainerImages;
  /** the default handler's runtime (runc), and the one used where no other is configured */
  runtime: ContainerRuntime;
  /** the runtime of each handler a pod may name (runtime/oci-runtime.ts); the default handler's is `runtime` */
  runtimes: Partial<Record<string, ContainerRuntime>>;
  cgroups: CgroupReader;
  host: ContainerHost;
  store: ContainerStore;
  names: NameRegistrar;
  locks: KeyedMutex;
  /** rootfs handles from images.prepareRootfs, by container id (lost on restart: see remove.ts) */
  rootfs: Map<string, ContainerRootfs>;
  emit(e: ContainerEvent): void;
  processAlive(pid: number, startTicks?: number): Promise<boolean>;
  /** kill(pid, 0), for a container under a live conmon (pods/status.ts runsUnderLiveMonitor); absent: always processAlive */
  processExists?(pid: number): boolean;
  processStartTicks(pid: number): Promise<number | undefined>;
  engineOomScoreAdj: number;
  cleanupTimeoutMs: number;
}

/**
 * The runtime a container runs on: its pod's runtime_handler ("" = the default). A handler with no runtime of its
 * own here (an engine with only the default configured) gets the default one.
 */
export function runtimeFor(ctx: Pick<ContainerContext, 'runtime' | 'runtimes'>, handler: string | undefined): ContainerRuntime {
  return (handler ? ctx.runtimes[handler] : undefined) ?? ctx.runtime;
}

/** every distinct runtime configured (the default first): start-up looks under each root for orphans */
export function allRuntimes(ctx: Pick<ContainerContext, 'runtime' | 'runtimes'>): ContainerRuntime[] {
  return [...new Set([ctx.runtime, ...Object.values(ctx.runtimes).filter((r): r is ContainerRuntime => r !== undefined)])];
}
