/**
 * CreateContainer (containerd internal/cri/server/container_create.go; CRI-O server/container_create.go;
 * docs/semantics.md#create-container): validate the config, find the sandbox (READY), reserve the container name,
 * resolve the image, then acquire — rootfs from the image store, the bundle dir with config.json, the log file, the
 * record — each pushing its undo on a LIFO stack. A failure unwinds the stack, so nothing is left behind: no name,
 * no rootfs, no bundle, no log file, no record. The runc container itself is made by StartContainer, as containerd
 * makes the task there (container_start.go).
 */
import { mkdir, open, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import {
  ContainerConfigSchema,
  MountPropagation,
  makeContainerName,
  SIGNAL_NAMES,
  type ContainerConfig,
  type CreateContainerRequest,
} from '../../../shared/domain/container';
import { formatIssues } from '../../../shared/domain/config';
import { PodscopeError, serializeError } from '../../../shared/domain/errors';
import type { TraceEntry } from '../../../shared/domain/trace';
import { seccompProfileRoot } from '../common/options';
import { buildContainerSpec, capabilities, type ContainerOciSpec } from '../runtime/container-spec';
import { checkSeccompRequest, loadSeccomp } from '../runtime/seccomp';
import { sandboxPaths } from '../runtime/sandbox-files';
import { CleanupStack, type CleanupFailure } from '../common/cleanup-stack';
import type { ContainerImage, ContainerPod } from './deps';
import { StepRecorder } from '../common/steps';
import type { ContainerContext } from './context';
import { generateContainerId } from './ids';
import { CONTAINER_RECORD_VERSION, type ContainerRecord } from './record';
import { resolveUser } from './user';
import { toContainerSummary } from './view';

export function parseContainerConfig(input: unknown): ContainerConfig {
  if (!input || typeof input !== 'object' || !('metadata' in input) || !input.metadata) {
    throw new PodscopeError('InvalidArgument', 'container config must include metadata');
  }
  const parsed = ContainerConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error);
    throw new PodscopeError('InvalidArgument', `invalid container config: ${issues.join('; ')}`, { details: { issues } });
  }
  if (!parsed.data.metadata.name) throw new PodscopeError('InvalidArgument', 'container config must include metadata.name');
  if (!parsed.data.image.image) throw new PodscopeError('InvalidArgument', 'container config must name an image (image.image)');
  return parsed.data;
}

/** The sandbox a container goes into: full id or unique prefix, and READY (its pause process is what it joins). */
export function readySandbox(ctx: ContainerContext, idOrPrefix: string): ContainerPod {
  if (idOrPrefix === '') throw new PodscopeError('InvalidArgument', 'pod_sandbox_id must not be empty');
  const sandbox = ctx.pods.get(idOrPrefix);
  if (sandbox.state !== 'Ready' || sandbox.pause.pid === undefined) {
    throw new PodscopeError(
      'FailedPrecondition',
      `sandbox ${JSON.stringify(sandbox.id)} is not ready (state ${sandbox.state}): containers join its pause process's namespaces`,
    );
  }
  return sandbox;
}

function stopSignal(config: ContainerConfig, image: ContainerImage): string {
  if (config.stop_signal > 0) {
    const name = SIGNAL_NAMES[config.stop_signal];
    if (!name) throw new PodscopeError('InvalidArgument', `stop_signal ${config.stop_signal} is not a CRI Signal`);
    return name;
  }
  const s = image.config.StopSignal;
  if (!s) return 'SIGTERM';
  if (/^\d+$/.test(s)) return s;
  return s.toUpperCase().startsWith('SIG') ? s.toUpperCase() : `SIG${s.toUpperCase()}`;
}

/** containerd: log_directory + log_path, only when both are set. */
function logPathOf(sandbox: ContainerPod, config: ContainerConfig): string {
  if (!sandbox.config.log_directory || !config.log_path) return '';
  if (isAbsolute(config.log_path))
    throw new PodscopeError('InvalidArgument', `log_path ${JSON.stringify(config.log_path)} must be relative to the pod's log_directory`);
  const path = join(sandbox.config.log_directory, config.log_path);
  if (!path.startsWith(join(sandbox.config.log_directory, '/')))
    throw new PodscopeError('InvalidArgument', `log_path ${JSON.stringify(config.log_path)} leaves the pod's log_directory`);
  return path;
}

/** what the spec builder needs of the sandbox: its pause pid to join and the files it shares with its containers */
function specSandboxOf(ctx: ContainerContext, sandbox: ContainerPod) {
  const paths = sandboxPaths(ctx.options.stateDir, ctx.options.runDir, sandbox.id);
  return {
    id: sandbox.id,
    config: sandbox.config,
    pausePid: sandbox.pause.pid!,
    hostnamePath: paths.hostname,
    hostsPath: paths.hosts,
    resolvConfPath: paths.resolvConf,
    shmPath: paths.shm,
  };
}

export async function createContainer(ctx: ContainerContext, req: CreateContainerRequest): Promise<{ id: string }> {
  const config = parseContainerConfig(req.config);
  const sandbox = readySandbox(ctx, req.podSandboxId);
  const id = generateContainerId();
  const name = makeContainerName(config.metadata, sandbox.config.metadata);
  const sc = config.linux?.security_context;
  const profileRoot = seccompProfileRoot(ctx.options);
  // Refused before anything is acquired: what the spec builder rejects (checked with placeholder paths), bad
  // seccomp refs, log paths outside the log directory, mounts whose host path is missing.
  checkSeccompRequest({ profile: sc?.seccomp, legacyPath: sc?.seccomp_profile_path ?? '', profileRoot });
  const logPath = logPathOf(sandbox, config);
  await checkMounts(ctx, config.mounts);
  const specSandbox = specSandboxOf(ctx, sandbox);

  const cleanup = new CleanupStack();
  ctx.names.reserve(name, id);
  cleanup.push(`release container name ${name}`, async () => ctx.names.releaseByName(name));
  // the steps go into the record once it exists: a create that fails leaves no record to keep them in
  const steps = { trace: [] as TraceEntry[] };
  const trace = new StepRecorder(steps, 'create', () => undefined);
  try {
    const image = await trace.step(
      'image.resolve',
      `resolve image ${config.image.image}`,
      async () => {
        const found = await ctx.images.resolve(config.image.image);
        if (!found) throw new PodscopeError('NotFound', `failed to resolve image ${JSON.stringify(config.image.image)}: not found`);
        return found;
      },
      (found) => ({ id: found.id }),
    );
    const imageView = { name: config.image.image, config: image.config };
    buildContainerSpec({
      id,
      config,
      image: imageView,
      sandbox: specSandbox,
      rootfsPath: '/',
      user: { uid: 0, gid: 0, additionalGids: [0] },
      engineOomScoreAdj: ctx.engineOomScoreAdj,
    });
    const signalName = stopSignal(config, image);

    const rootDir = join(ctx.options.stateDir, 'containers', id);
    const bundleDir = join(ctx.options.runDir, 'containers', id, 'bundle');
    cleanup.push(`delete container dir ${rootDir}`, () => rm(rootDir, { recursive: true, force: true }));
    await mkdir(rootDir, { recursive: true, mode: 0o711 });
    const rootfs = await trace.step(
      'rootfs.prepare',
      'count a user of the image and mount its layers (overlay)',
      () => ctx.images.prepareRootfs(image.id, id, rootDir),
      (r) => ({ path: r.path }),
    );
    cleanup.push(`release rootfs ${rootfs.path}`, () => rootfs.release());
    ctx.rootfs.set(id, rootfs);
    cleanup.push('forget rootfs handle', async () => void ctx.rootfs.delete(id));

    const user = await trace.step(
      'user.resolve',
      "resolve the user in the image's /etc/passwd and /etc/group",
      () => resolveUser(config, image.config, rootfs.path),
      (u) => ({ uid: u.uid, gid: u.gid, groups: u.additionalGids }),
    );
    const held = (await ctx.host.heldCapabilities?.()) ?? undefined;
    const caps = capabilities(config, held);
    const privileged = sc?.privileged ?? false;
    const seccomp = await trace.step(
      'seccomp.load',
      'load the seccomp profile',
      () => loadSeccomp({ profile: sc?.seccomp, legacyPath: sc?.seccomp_profile_path ?? '', privileged, capabilities: caps, profileRoot }),
      (r) => ({ applied: r.applied }),
    );
    const apparmor = await apparmorProfile(ctx, config, privileged);
    const spec: ContainerOciSpec = buildContainerSpec({
      id,
      config,
      image: imageView,
      sandbox: specSandbox,
      rootfsPath: rootfs.path,
      user,
      seccomp: seccomp.spec,
      apparmorProfile: apparmor || undefined,
      engineOomScoreAdj: ctx.engineOomScoreAdj,
      heldCapabilities: held,
    });

    cleanup.push(`delete bundle ${dirname(bundleDir)}`, () => rm(dirname(bundleDir), { recursive: true, force: true }));
    await mkdir(bundleDir, { recursive: true, mode: 0o700 });

    const logCreated = logPath ? await createLogFile(logPath, cleanup) : false;

    const now = new Date();
    const rec: ContainerRecord = {
      version: CONTAINER_RECORD_VERSION,
      id,
      name,
      sandboxId: sandbox.id,
      ...(sandbox.runtimeHandler ? { runtimeHandler: sandbox.runtimeHandler } : {}),
      config,
      imageName: config.image.image,
      imageId: image.id,
      createdAt: now.toISOString(),
      createdAtNs: (BigInt(now.getTime()) * 1_000_000n).toString(),
      state: 'Created',
      rootDir,
      rootfsPath: rootfs.path,
      bundleDir,
      logPath,
      logCreated,
      user,
      seccomp: seccomp.applied,
      apparmor: apparmor || (privileged ? 'unconfined' : ''),
      stopSignal: signalName,
      cgroupsPath: spec.linux.cgroupsPath,
      ociSpec: spec,
      trace: steps.trace,
    };
    cleanup.push('delete container record', () => ctx.store.delete(id));
    await ctx.store.add(rec);
    cleanup.release();
    ctx.emit({ type: 'container.added', id, summary: toContainerSummary(rec) });
    return { id };
  } catch (error) {
    const failures = await cleanup.unwind(ctx.cleanupTimeoutMs);
    if (failures.length === 0 || !(error instanceof PodscopeError)) throw error;
    throw withCleanupFailures(error, failures);
  }
}

/** Refused before anything is acquired: relative or missing host paths, and propagation the host mount cannot give. */
async function checkMounts(ctx: ContainerContext, mounts: ContainerConfig['mounts']): Promise<void> {
  for (const m of mounts) {
    if (!isAbsolute(m.host_path))
      throw new PodscopeError('InvalidArgument', `mount host_path ${JSON.stringify(m.host_path)} must be absolute`);
    // containerd: a missing host path is an error (kubelet creates the directories it wants created)
    if (!(await ctx.host.pathExists(m.host_path)))
      throw new PodscopeError(
        'InvalidArgument',
        `failed to mount ${JSON.stringify(m.host_path)} at ${JSON.stringify(m.container_path)}: host path does not exist`,
      );
    // containerd WithMounts (ensureShared / ensureSharedOrSlave): propagation needs the source's mount to take part;
    // otherwise the container would silently get none, so the create is refused
    if (m.propagation === MountPropagation.PROPAGATION_BIDIRECTIONAL || m.propagation === MountPropagation.PROPAGATION_HOST_TO_CONTAINER) {
      const on = await ctx.host.mountPropagation?.(m.host_path);
      const bidi = m.propagation === MountPropagation.PROPAGATION_BIDIRECTIONAL;
      if (on && (bidi ? on.propagation !== 'shared' : on.propagation === 'private'))
        throw new PodscopeError(
          'InvalidArgument',
          `path ${JSON.stringify(m.host_path)} is mounted on ${JSON.stringify(on.mountPoint)} but it is not a shared${bidi ? '' : ' or slave'} mount`,
          { details: { field: 'mounts.propagation', hostPath: m.host_path, mountPoint: on.mountPoint } },
        );
    }
  }
}

/**
 * The container's log file, created empty if absent. Returns whether this create made it ('wx'): only then does a
 * failed create (the undo it pushes) delete it.
 */
async function createLogFile(logPath: string, cleanup: CleanupStack): Promise<boolean> {
  let logCreated = false;
  await mkdir(dirname(logPath), { recursive: true, mode: 0o755 });
  const fh = await open(logPath, 'wx', 0o640).then(
    (h) => {
      logCreated = true;
      return h;
    },
    (e: NodeJS.ErrnoException) => (e.code === 'EEXIST' ? undefined : Promise.reject(e)),
  );
  await fh?.close();
  if (logCreated) cleanup.push(`delete log file ${logPath}`, () => rm(logPath, { force: true }));
  return logCreated;
}

/** the create's own error, naming each undo that failed too (so what is left on the host is said) */
function withCleanupFailures(error: PodscopeError, failures: CleanupFailure[]): PodscopeError {
  return new PodscopeError(
    error.code,
    `${error.message}; cleanup failed: ${failures.map((f) => `${f.step}: ${(f.error as Error)?.message ?? String(f.error)}`).join('; ')}`,
    {
      cause: error,
      details: { cleanupFailures: failures.map((f) => ({ step: f.step, error: serializeError(f.error) })) },
    },
  );
}

/**
 * AppArmor only where the kernel has it (containerd GenerateApparmorSpecOpts): without it, RuntimeDefault and
 * unconfined are no-ops and a Localhost profile is an error. With it, RuntimeDefault is the host's
 * "cri-containerd.apparmor.d"-style default only if loaded; Podscope ships none, so it names docker-default.
 */
async function apparmorProfile(ctx: ContainerContext, config: ContainerConfig, privileged: boolean): Promise<string> {
  const sc = config.linux?.security_context;
  const p = sc?.apparmor;
  const legacy = sc?.apparmor_profile ?? '';
  const wantsLocalhost = p ? p.profile_type === 2 : legacy.startsWith('localhost/');
  const unconfined = p ? p.profile_type === 1 : legacy === 'unconfined';
  const enabled = await ctx.host.apparmorEnabled();
  if (!enabled) {
    if (wantsLocalhost)
      throw new PodscopeError(
        'InvalidArgument',
        'apparmor is not supported on this host (the kernel has no AppArmor), but a Localhost profile was asked for',
      );
    return '';
  }
  if (privileged || unconfined || (!p && !legacy)) return '';
  if (wantsLocalhost) return p ? p.localhost_ref : legacy.slice('localhost/'.length);
  return 'docker-default';
}
