/**
 * Per-sandbox files, laid out as containerd does (docs/semantics.md#sandbox-files): `hostname`, `hosts` and `resolv.conf` under
 * `<stateDir>/sandboxes/<id>`, and under `<runDir>/sandboxes/<id>` the 64 MiB `/dev/shm` tmpfs plus the runc bundle.
 * Only resolv.conf and shm are mounted into the pause container; hostname and hosts are there for app containers.
 */
import { copyFile, mkdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { hostname as osHostname } from 'node:os';
import { dirname, join } from 'node:path';
import type { DNSConfig, PodSandboxConfig } from '../../../shared/domain/config';
import { PodscopeError } from '../../../shared/domain/errors';
import { runChecked, type ProcessRunner } from '../os/exec';

export interface SandboxPaths {
  /** `<stateDir>/sandboxes/<id>` */
  filesDir: string;
  /** `<runDir>/sandboxes/<id>` */
  runtimeDir: string;
  hostname: string;
  hosts: string;
  resolvConf: string;
  shm: string;
  /** runc bundle directory (config.json, runc.log) */
  bundle: string;
}

export function sandboxPaths(stateDir: string, runDir: string, id: string): SandboxPaths {
  const filesDir = join(stateDir, 'sandboxes', id);
  const runtimeDir = join(runDir, 'sandboxes', id);
  return {
    filesDir,
    runtimeDir,
    hostname: join(filesDir, 'hostname'),
    hosts: join(filesDir, 'hosts'),
    resolvConf: join(filesDir, 'resolv.conf'),
    shm: join(runtimeDir, 'shm'),
    bundle: join(runtimeDir, 'bundle'),
  };
}

/** The host files a sandbox copies when the pod does not say otherwise. */
export interface HostFiles {
  hostsPath: string;
  resolvConfPath: string;
  hostname: string;
}

export function defaultHostFiles(): HostFiles {
  return { hostsPath: '/etc/hosts', resolvConfPath: '/etc/resolv.conf', hostname: osHostname() };
}

/** `search`, then one `nameserver` per server, then `options`; an empty DNSConfig gives an empty file. */
export function renderResolvConf(dns: DNSConfig): string {
  let out = '';
  if (dns.searches.length > 0) out += `search ${dns.searches.join(' ')}\n`;
  for (const server of dns.servers) out += `nameserver ${server}\n`;
  if (dns.options.length > 0) out += `options ${dns.options.join(' ')}\n`;
  return out;
}

export function renderHostname(config: PodSandboxConfig, hostHostname: string): string {
  return `${config.hostname || hostHostname}\n`;
}

const SHM_SIZE_BYTES = 64 * 1024 * 1024;
const TIMEOUT_MS = 10_000;

export async function writeSandboxFiles(
  paths: SandboxPaths,
  config: PodSandboxConfig,
  host: HostFiles = defaultHostFiles(),
): Promise<void> {
  try {
    await mkdir(paths.filesDir, { recursive: true, mode: 0o755 });
    await writeFile(paths.hostname, renderHostname(config, host.hostname), { mode: 0o644 });
    await copyFile(host.hostsPath, paths.hosts);
    if (config.dns_config) await writeFile(paths.resolvConf, renderResolvConf(config.dns_config), { mode: 0o644 });
    else await copyFile(host.resolvConfPath, paths.resolvConf);
  } catch (e) {
    throw new PodscopeError('RuntimeError', `failed to setup sandbox files in ${paths.filesDir}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Whether something is mounted on `path`: its device differs from its parent's. Two stat calls, where reading
 * /proc/self/mountinfo costs a line per mount on the host (each pod adds its shm and its containers' rootfs), so
 * tearing down many pods re-read a table that grew with them. Good enough here: the only mount ever made on these
 * directories is our own tmpfs, whose device is new; a bind mount of the same filesystem would not show.
 */
async function isMountPoint(path: string): Promise<boolean> {
  try {
    const real = await realpath(path);
    const [self, parent] = await Promise.all([stat(real), stat(dirname(real))]);
    return self.dev !== parent.dev;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

/** Mounts the sandbox's own /dev/shm tmpfs (noexec,nosuid,nodev, mode 1777, 64 MiB). Idempotent. */
export async function mountShm(runner: ProcessRunner, shmDir: string, signal?: AbortSignal): Promise<void> {
  await mkdir(shmDir, { recursive: true, mode: 0o755 });
  if (await isMountPoint(shmDir)) return;
  await runChecked(runner, {
    file: 'mount',
    args: ['-t', 'tmpfs', '-o', `noexec,nosuid,nodev,mode=1777,size=${SHM_SIZE_BYTES}`, 'shm', shmDir],
    timeoutMs: TIMEOUT_MS,
    signal,
  });
}

/** Lazy-unmounts the shm tmpfs (every stacked mount, in case of a repeated mount). Idempotent. */
export async function unmountShm(runner: ProcessRunner, shmDir: string): Promise<void> {
  // one look before and one after each unmount (the last look is also the final answer): two reads for one mount
  let mounted = await isMountPoint(shmDir);
  for (let i = 0; i < 4 && mounted; i++) {
    await runChecked(runner, { file: 'umount', args: ['-l', shmDir], timeoutMs: TIMEOUT_MS });
    mounted = await isMountPoint(shmDir);
  }
  if (mounted) throw new PodscopeError('RuntimeError', `${shmDir} is still mounted after unmounting it 4 times`);
}

/** Unmounts shm, then deletes both per-sandbox directories. Idempotent. */
export async function removeSandboxFiles(runner: ProcessRunner, paths: SandboxPaths): Promise<void> {
  // Never recurse into a still-mounted tmpfs: unmount first, and fail rather than delete through a mount.
  await unmountShm(runner, paths.shm);
  await rm(paths.runtimeDir, { recursive: true, force: true });
  await rm(paths.filesDir, { recursive: true, force: true });
}
