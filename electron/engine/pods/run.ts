/**
 * RunPodSandbox (containerd sandbox_run.go, docs/semantics.md#run-sequence): validate everything first, reserve the name, create the netns,
 * then CNI ADD alongside sandbox files/shm → pause container. Each acquired resource pushes its undo; on failure the stack
 * unwinds with a fresh timeout. Only a fully clean unwind forgets the sandbox and releases its name; otherwise the
 * sandbox stays (Unknown, listed NOTREADY) with the error, so stop/remove can finish the job.
 */
import { conflistSuffix } from '../cni/cni-error';
import { join } from 'node:path';
import { formatIssues, isHostNetwork, PodSandboxConfigSchema, type PodSandboxConfig } from '../../../shared/domain/config';
import { RunPodSandboxConfigSchema } from '../../../shared/domain/config-checks';
import { PodscopeError, serializeError } from '../../../shared/domain/errors';
import { selectPodIPs } from '../../../shared/domain/ip-selection';
import { hostIpFamilyProblems } from '../../../shared/domain/portmap';
import type { RunSandboxRequest } from '../../../shared/domain/sandbox';
import { seccompProfileRoot } from '../common/options';
import { DEFAULT_CAPABILITIES } from '../runtime/oci-spec';
import { resolveRuntimeHandler } from '../runtime/oci-runtime';
import { loadSeccomp } from '../runtime/seccomp';
import { CleanupStack } from '../common/cleanup-stack';
import { buildCniOptions } from './cni-options';
import type { CniNamespaceOptions } from '../cni/types';
import type { PodsContext } from './context';
import { cniHooks, runtimeReporter } from './hooks';
import { generateSandboxId, makeSandboxName } from './ids';
import { pauseLocationOf, RECORD_VERSION, type SandboxRecord } from './record';
import { StepRecorder } from '../common/steps';
import { processStartTicks } from '../common/proc';
import { toSummary } from './view';
import { teardownNetwork } from './teardown';
import { describePending, executedOnAdd, holdsOf, pendingStep, setPending } from './pending-cleanup';

/**
 * @param opts.checks false for the shape only (the create form's preview reports the run checks as errors instead,
 *   so a half-typed host_ip does not hide the preview)
 */
export function parseRunConfig(input: unknown, opts: { checks?: boolean } = {}): PodSandboxConfig {
  if (!input || typeof input !== 'object' || !('metadata' in input) || !input.metadata) {
    throw new PodscopeError('InvalidArgument', 'sandbox config must include metadata');
  }
  // the shape plus what would fail only after something was acquired (NUL in CNI_ARGS, a host_ip that is no IP, …)
  const parsed = (opts.checks === false ? PodSandboxConfigSchema : RunPodSandboxConfigSchema).safeParse(input);
  if (!parsed.success) {
    const issues = formatIssues(parsed.error);
    throw new PodscopeError('InvalidArgument', `invalid sandbox config: ${issues.join('; ')}`, { details: { issues } });
  }
  return parsed.data;
}

/** `port_mappings[i].host_ip: …` for each host_ip of a family the pod's networks cannot give (shared/domain/portmap.ts). */
export function hostIpFamilyIssues(ctx: Pick<PodsContext, 'cni'>, config: PodSandboxConfig): string[] {
  return hostIpFamilyProblems(config.port_mappings, ctx.cni.config().networks).map(
    (p) => `port_mappings[${p.index}].host_ip: ${p.message}`,
  );
}

export async function runSandbox(ctx: PodsContext, req: RunSandboxRequest, signal?: AbortSignal): Promise<{ id: string }> {
  const config = parseRunConfig(req.config);
  const runtimeHandler = req.runtimeHandler ?? '';
  const id = generateSandboxId();
  try {
    // runc or crun (runtime/oci-runtime.ts); the pod's pause and containers all run on it
    const handler = resolveRuntimeHandler(runtimeHandler);
    const missing = ctx.runtimeHandlers?.find((h) => h.name === handler && !h.present);
    if (missing) throw new PodscopeError('FailedPrecondition', `runtime_handler ${JSON.stringify(handler)}: ${missing.problem}`);
  } catch (e) {
    const err = e as PodscopeError;
    throw new PodscopeError(err.code, `unable to get OCI runtime for sandbox ${JSON.stringify(id)}: ${err.message}`, {
      details: err.details,
    });
  }
  const hostNetwork = isHostNetwork(config);
  // Bad input is refused before anything is acquired: bandwidth annotations and what runc would reject.
  const cniOptions = hostNetwork ? undefined : buildCniOptions(id, config);
  if (cniOptions) {
    const [problem] = hostIpFamilyIssues(ctx, config);
    if (problem) throw new PodscopeError('InvalidArgument', `invalid sandbox config: ${problem}`, { details: { issues: [problem] } });
  }
  ctx.buildPauseSpec({
    id,
    config,
    netnsPath: hostNetwork ? undefined : '/dev/null',
    rootfsPath: '/',
    resolvConfPath: '/dev/null',
    shmPath: '/dev/null',
    engineOomScoreAdj: ctx.engineOomScoreAdj,
    seccompProfileRoot: seccompProfileRoot(ctx.options),
  });

  const name = makeSandboxName(config.metadata);
  ctx.names.reserve(name, id);
  const now = new Date();
  const rec: SandboxRecord = {
    version: RECORD_VERSION,
    id,
    name,
    config,
    runtimeHandler,
    ipPreference: req.ipPreference ?? ctx.options.ipPreference,
    createdAt: now.toISOString(),
    createdAtNs: (BigInt(now.getTime()) * 1_000_000n).toString(),
    state: 'Unknown',
    ip: '',
    additionalIps: [],
    pause: { containerId: id, status: 'creating', bundle: join(ctx.options.runDir, 'sandboxes', id, 'bundle') },
    // the pod's handler runs its pause too, as containerd and CRI-O run the sandbox container (docs/semantics.md#runtime-handlers)
    pauseRuntime: ctx.runtime.locate(runtimeHandler),
    rootDir: join(ctx.options.stateDir, 'sandboxes', id),
    runDir: join(ctx.options.runDir, 'sandboxes', id),
    trace: [],
  };
  const trace = new StepRecorder(rec, 'run', (entry) => ctx.emit({ type: 'sandbox.progress', id, requestId: req.requestId, entry }));
  const cleanup = new CleanupStack();

  return ctx.locks.run(id, async () => {
    try {
      // Every name is chosen and saved before anything exists on the host: a crash at any later point leaves a
      // record that says what to look for, and stop/remove release it (each undo is idempotent).
      if (cniOptions) rec.netnsPath = ctx.netns.newPath();
      await ctx.store.save(rec);
      ctx.emit({ type: 'sandbox.added', id, summary: toSummary(rec) });
      if (rec.netnsPath) {
        const netnsPath = rec.netnsPath;
        cleanup.push(
          `remove network namespace ${netnsPath}`,
          async () => {
            // Kept while a plugin's DEL is pending: the bridge plugin finds the pod's addresses (and so its ipMasq
            // rules) through eth0 in this namespace, and a DEL without it releases only the IPAM part.
            if (rec.cleanupPending?.some((p) => p.kind === 'cni')) {
              throw new PodscopeError(
                'FailedPrecondition',
                "kept for the pending CNI DEL (the bridge plugin reads the pod's addresses from it)",
              );
            }
            await ctx.netns.remove(netnsPath);
          },
          { kind: 'netns', holds: [] },
        );
        await trace.step(
          'netns.create',
          'create network namespace',
          () => ctx.netns.create(signal, netnsPath),
          (p) => ({ path: p }),
        );
        // Registered before ADD: a failing ADD may already have allocated (an IP, a veth), and CNI requires a DEL anyway.
        cleanup.push('CNI DEL of every network', (s) => teardownNetwork(ctx, rec, trace, netnsPath, s), { kind: 'cni', holds: [] });
      }

      // The pause container needs the netns path, not the CNI result, so it starts while the plugins run
      // (containerd runs them one after the other); both must succeed, and both undo through the same stack.
      const outcomes = await Promise.allSettled([
        cniOptions ? attachNetwork(ctx, rec, cniOptions, trace, signal) : Promise.resolve(),
        startPause(ctx, rec, cleanup, trace, signal),
      ]);
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;

      rec.state = 'Ready';
      await ctx.store.save(rec);
      cleanup.release();
      ctx.emit({ type: 'sandbox.changed', id, summary: toSummary(rec) });
      return { id };
    } catch (error) {
      throw await failRun(ctx, rec, cleanup, error);
    }
  });
}

async function attachNetwork(
  ctx: PodsContext,
  rec: SandboxRecord,
  options: CniNamespaceOptions,
  trace: StepRecorder,
  signal?: AbortSignal,
): Promise<void> {
  let network;
  try {
    network = await trace.step(
      'cni.setup',
      'CNI ADD of every network',
      () => ctx.cni.setup(rec.id, rec.netnsPath!, options, cniHooks(ctx, trace, signal)),
      (r) => ({
        networks: r.networks.map((n) => `${n.network}/${n.ifName}`),
      }),
    );
  } catch (error) {
    // the unwind DELs only what this ADD executed: a plugin never started (not reached, binary missing) holds nothing
    rec.cniExecutedOnAdd = executedOnAdd(rec.trace);
    throw error;
  }
  rec.network = network;
  const eth0Ips = network.interfaces.eth0?.ipConfigs.map((c) => c.ip) ?? [];
  if (eth0Ips.length === 0) {
    throw new PodscopeError(
      'CniError',
      `failed to find network info for sandbox ${JSON.stringify(rec.id)}: the CNI result gives eth0 no IP`,
      { details: { interfaces: network.interfaces } },
    );
  }
  const selection = selectPodIPs(eth0Ips, rec.ipPreference);
  rec.ip = selection.primary;
  rec.additionalIps = selection.additional;
  rec.ipSelection = { ...selection, eth0Ips };
}

async function startPause(
  ctx: PodsContext,
  rec: SandboxRecord,
  cleanup: CleanupStack,
  trace: StepRecorder,
  signal?: AbortSignal,
): Promise<void> {
  const { id, config } = rec;
  // pushed first: a prepare that fails half-way has already written files
  cleanup.push(
    'unmount /dev/shm and delete sandbox files',
    (s) => ctx.files.cleanup({ rootDir: rec.rootDir, runDir: rec.runDir, signal: s }),
    { kind: 'files', holds: [rec.rootDir, rec.runDir] },
  );
  const files = await trace.step(
    'sandbox.files',
    'write hostname, hosts, resolv.conf; mount 64 MiB /dev/shm',
    () => ctx.files.prepare({ id, config, rootDir: rec.rootDir, runDir: rec.runDir, signal }),
    (f) => ({ ...f }),
  );
  const rootfsPath = await trace.step(
    'pause.rootfs',
    'ensure pause rootfs',
    () => ctx.runtime.ensureRootfs(),
    (p) => ({ path: p }),
  );
  const sc = config.linux?.security_context;
  const profileRoot = seccompProfileRoot(ctx.options);
  // containerd applies the pod's seccomp profile to the pause container too (docs/semantics.md#seccomp)
  const seccomp = await trace.step(
    'pause.seccomp',
    'load the seccomp profile',
    () =>
      loadSeccomp({
        profile: sc?.seccomp,
        legacyPath: sc?.seccomp_profile_path ?? '',
        privileged: sc?.privileged ?? false,
        capabilities: DEFAULT_CAPABILITIES,
        profileRoot,
      }),
    (c) => ({ applied: c.applied }),
  );
  rec.seccomp = seccomp.applied;
  const spec = ctx.buildPauseSpec({
    id,
    config,
    netnsPath: rec.netnsPath,
    rootfsPath,
    resolvConfPath: files.resolvConfPath,
    shmPath: files.shmPath,
    engineOomScoreAdj: ctx.engineOomScoreAdj,
    seccomp,
    seccompProfileRoot: profileRoot,
  });
  rec.ociSpec = spec;
  const report = runtimeReporter(trace);
  const at = pauseLocationOf(rec);
  cleanup.push(
    'kill and delete the pause container',
    async (s) => {
      // stop waits for the pause's conmon too (and a failed start ends its own): no conmon outlives the undo
      await ctx.runtime.stop(id, at, { signal: s, report });
      await ctx.runtime.delete(id, at, { signal: s, report });
      rec.pause = { ...rec.pause, status: 'deleted' }; // a kept sandbox must not show a pause that no longer runs
    },
    { kind: 'pause', holds: [`${at.handler} container ${id}`] },
  );
  const bundle = rec.pause.bundle!;
  const { pid, monitorPid } = await ctx.runtime.start(id, bundle, spec, { at, signal, report });
  rec.pause = {
    containerId: id,
    pid,
    startTicks: await processStartTicks(pid),
    ...(monitorPid ? { monitorPid } : {}),
    status: 'running',
    bundle,
  };
}

/** Unwinds after a failed run and decides whether the sandbox can be forgotten. Returns the error to throw. */
async function failRun(ctx: PodsContext, rec: SandboxRecord, cleanup: CleanupStack, error: unknown): Promise<unknown> {
  const cleanupTrace = new StepRecorder(rec, 'cleanup', (entry) => ctx.emit({ type: 'sandbox.progress', id: rec.id, entry }));
  const undone: string[] = [];
  const failures = await cleanup.unwind(ctx.cleanupTimeoutMs, (description, ok, err, durationMs = 0) => {
    if (ok) undone.push(description);
    cleanupTrace.add({
      step: 'cleanup',
      label: description,
      startedAt: new Date(Date.now() - durationMs).toISOString(),
      durationMs,
      ok,
      error: err,
    });
  });
  const wrapped = wrapRunError(rec.id, error, releasedBy(rec, undone));
  if (failures.length === 0) {
    await ctx.store.delete(rec.id).catch(() => undefined);
    ctx.names.releaseByName(rec.name);
    ctx.emit({ type: 'sandbox.removed', id: rec.id });
    return wrapped;
  }
  // Something could not be undone: keep the sandbox (and its name) so stop/remove can finish the job later, with
  // what is left in the record (the CNI DEL step already wrote its per-plugin entries).
  for (const kind of ['netns', 'pause', 'files', 'other'] as const) {
    const of = failures.filter((f) => (f.kind ?? 'other') === kind);
    if (of.length > 0)
      setPending(
        rec,
        kind,
        of.map((f) => pendingStep(kind, f.step, f.holds ?? [], f.error)),
      );
  }
  if (failures.some((f) => f.kind === 'cni') && !rec.cleanupPending?.some((p) => p.kind === 'cni')) {
    setPending(
      rec,
      'cni',
      failures.filter((f) => f.kind === 'cni').map((f) => pendingStep('cni', f.step, [], f.error)),
    );
  }
  rec.state = 'Unknown';
  rec.ip = '';
  rec.additionalIps = [];
  rec.lastError = serializeError(wrapped);
  const left = rec.cleanupPending ?? [];
  cleanupTrace.add({
    step: 'cleanup.pending',
    label: `cleanup pending, kept for stop/remove: ${describePending(left)}`,
    startedAt: new Date().toISOString(),
    durationMs: 0,
    ok: false,
    detail: { cleanupPending: left },
  });
  await ctx.store.save(rec).catch(() => undefined);
  ctx.emit({ type: 'sandbox.changed', id: rec.id, summary: toSummary(rec) });
  return new PodscopeError(
    wrapped instanceof PodscopeError ? wrapped.code : 'Internal',
    `${(wrapped as Error).message}; cleanup pending (the sandbox is kept NOTREADY; stop/remove retry it): ${describePending(left)}`,
    {
      cause: wrapped,
      details: {
        sandboxId: rec.id,
        cleanupPending: left,
        cleanupFailures: failures.map((f) => ({ step: f.step, error: serializeError(f.error) })),
      },
    },
  );
}

/**
 * What the unwind of a failed run released, for its error: each plugin whose DEL succeeded with what it held, then
 * every other undo that succeeded. The same words as a pending cleanup's, so a report says what went and what stayed.
 */
function releasedBy(rec: SandboxRecord, undone: string[]): string[] {
  const plugins = rec.trace.flatMap((t) => {
    const p = t.plugin;
    if (t.step !== 'cni.plugin' || !p || p.verb !== 'DEL' || !t.ok) return [];
    const holds = holdsOf(rec, p);
    return [`${p.type} DEL (${p.network}/${p.ifName})${holds.length > 0 ? `: ${holds.join('; ')}` : ''}`];
  });
  return [...plugins, ...undone.filter((d) => !d.startsWith('CNI DEL'))];
}

function wrapRunError(id: string, error: unknown, released: string[] = []): unknown {
  if (!(error instanceof PodscopeError)) return error;
  if (error.code === 'InvalidArgument') return error;
  const prefix =
    error.code === 'CniError' && !error.message.startsWith('failed to find network info')
      ? `failed to setup network for sandbox ${JSON.stringify(id)}`
      : `failed to run sandbox ${JSON.stringify(id)}`;
  const details = released.length > 0 ? { ...(error.details as Record<string, unknown> | undefined), released } : error.details;
  return new PodscopeError(error.code, `${prefix}: ${error.message}${conflistSuffix(error)}`, { cause: error, details });
}
