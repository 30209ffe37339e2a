/**
 * One lab run: a validated conflist TEXT dry-run in a throwaway netns through the CNI module the sandbox runtime
 * uses (ADD, CHECK as libcni gates it, the optional probe, DEL), the kernel snapshotted before ADD, after ADD and
 * after DEL, the verdict drawn from the snapshots, and the run kept as a record. The in-flight record goes down before
 * the netns exists and away after the run's record is saved, so a crash at any point is found by the next start-up.
 */
import { linkMtus } from './link-mtu';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { PodscopeError, serializeError } from '../../../shared/domain/errors';
import type {
  LabConflict,
  LabPhase,
  LabPluginTrace,
  LabPluginVersion,
  LabProgress,
  LabRun,
  LabRunRequestSchema,
} from '../../../shared/domain/lab';
import type { z } from 'zod';
import type { LoadedNetwork } from '../cni/conf-dir';
import { addNetworkList, checkNetworkList, delNetworkList, isCheckNotSupported, type Attachment } from '../cni/network-ops';
import type { ExecContext } from '../cni/plugin-exec';
import { resolvePluginBinary } from '../cni/plugin-path';
import { ResultCache } from '../cni/result-cache';
import type { NetnsManager } from '../netns/types';
import type { ProbeNet } from '../netns/probe-net';
import { LAB_IFNAME, labAttachment, labExecContext, labNetwork, type LabExecDeps } from './cni-calls';
import { runChanges, kernelWatch } from './changes';
import { conflistFacts, type ConflistFacts } from './conflist-facts';
import { processIdentity } from './inflight';
import { emptySnapshot, type LabSnapshotRead, type LabSnapshotReader, type KernelScope } from './kernel';
import { probeLabNetns } from './probe';
import type { LabRecords } from './record';
import type { ParsedConflist } from './validate';
import { namesFromTraces, placeholderTokens } from './names';
import { verdict } from './verdict';

export type ParsedRunRequest = z.output<typeof LabRunRequestSchema>;

export interface LabRunDeps extends LabExecDeps {
  /** namespaces of the lab's own (never the engine's ownership-stamped cni-* ones) */
  netns: NetnsManager;
  kernel: LabSnapshotReader;
  probeNet?: ProbeNet;
  probeConnectTimeoutMs?: number;
}

/** what validation accepted: the parsed list and the live-pod conflicts the user overrode with force */
export interface AcceptedConflist {
  parsed: ParsedConflist;
  conflicts: LabConflict[];
}

type Snapshot = LabSnapshotRead;

/** everything one run's steps share */
interface RunState {
  deps: LabRunDeps;
  req: ParsedRunRequest;
  run: LabRun;
  facts: ConflistFacts;
  net: LoadedNetwork;
  att: Attachment;
  cache: ResultCache;
  scope: KernelScope;
  ctx: ExecContext;
  /** what the plugin execs recorded now belong to */
  phase: { current: LabPhase };
  emit: (p: LabProgress) => void;
  progress: (step: string, plugin?: LabPluginTrace) => void;
}

function newRunId(now = new Date()): string {
  const t = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${t}-${randomBytes(3).toString('hex')}`;
}

function newRun(req: ParsedRunRequest, accepted: AcceptedConflist, netnsDir: string): LabRun {
  const id = newRunId();
  const containerId = `podscope-lab-${id}`;
  return {
    id,
    createdAt: new Date().toISOString(),
    text: req.text,
    name: accepted.parsed.name,
    cniVersion: accepted.parsed.cniVersion,
    capabilities: req.capabilities,
    containerId,
    netns: path.join(netnsDir, containerId),
    ifName: LAB_IFNAME,
    plugins: [],
    versions: [],
    addOk: false,
    delOk: false,
    kernelCreated: [],
    leftAfterDel: [],
    keptByDesign: [],
    forced: accepted.conflicts,
    tokens: {},
    snapshotErrors: [],
    durationMs: 0,
    success: false,
  };
}

async function pluginVersion(type: string, binary: string): Promise<LabPluginVersion> {
  const [bytes, st] = await Promise.all([readFile(binary), stat(binary)]);
  return { type, path: binary, sha256: createHash('sha256').update(bytes).digest('hex'), size: st.size, mtime: st.mtime.toISOString() };
}

/** the binary of every plugin and IPAM type the list names, with its hash: which plugins the run really ran */
async function pluginVersions(plugins: ParsedConflist['plugins'], binDirs: string[]): Promise<LabPluginVersion[]> {
  const types = new Set<string>();
  for (const p of plugins) {
    types.add(p.type as string);
    const ipam = p.ipam as { type?: unknown } | undefined;
    if (ipam && typeof ipam.type === 'string') types.add(ipam.type);
  }
  const out: LabPluginVersion[] = [];
  for (const type of types) {
    const binary = await resolvePluginBinary(type, binDirs);
    if (binary) out.push(await pluginVersion(type, binary).catch(() => ({ type, path: binary, sha256: '', size: 0, mtime: '' })));
  }
  return out;
}

function runState(
  deps: LabRunDeps,
  records: LabRecords,
  req: ParsedRunRequest,
  accepted: AcceptedConflist,
  emit: RunState['emit'],
): RunState {
  const run = newRun(req, accepted, deps.options.netnsDir);
  const facts = conflistFacts(accepted.parsed.name, accepted.parsed.plugins);
  const cache = new ResultCache(records.cacheDir);
  const progress = (step: string, plugin?: LabPluginTrace) =>
    emit({ requestId: req.requestId, runId: run.id, step, ...(plugin ? { plugin } : {}) });
  const phase: RunState['phase'] = { current: 'ADD' };
  const ctx = labExecContext(
    deps,
    () => phase.current,
    (trace) => {
      run.plugins.push(trace);
      progress(`${trace.verb} ${trace.type}`, trace);
    },
  );
  const net = labNetwork(req.text, LAB_IFNAME);
  const att = labAttachment(run, req.capabilities);
  const scope = { ipamDirs: facts.ipamDirs, cacheResultsDir: cache.dir, containerId: run.containerId, watch: kernelWatch(facts.owners) };
  return { deps, req, run, facts, net, att, cache, scope, ctx, phase, emit, progress };
}

async function addStep(s: RunState): Promise<void> {
  try {
    const attached = await addNetworkList(s.ctx, s.cache, s.net, s.att);
    s.run.addOk = true;
    s.run.result = attached.result;
  } catch (e) {
    s.run.error = serializeError(e);
  }
}

/**
 * CHECK through the runtime's gate: a list older than 0.4.0 has none, a list with disableCheck skips it. libcni stops
 * at the first failing plugin; a failure the engine knows as a defect of the plugin's installed release is a warning,
 * and the plugins after it are still checked (each marked as run past the defect, since libcni would not have).
 */
async function checkStep(s: RunState): Promise<void> {
  const { run } = s;
  const cached = await s.cache.readResult({ networkName: s.net.list.name, containerId: run.containerId, ifName: LAB_IFNAME });
  if (cached.state === 'found') run.rawResult = cached.result;
  if (s.req.skipCheck) {
    run.checkSkipped = 'skipped on request';
    return;
  }
  s.phase.current = 'CHECK';
  const firstCheck = run.plugins.length;
  try {
    const checked = await checkNetworkList(s.ctx, s.cache, s.net, s.att);
    if (checked.outcome === 'disabled') run.checkSkipped = 'disableCheck is set';
    else run.checkOk = true;
    if (checked.knownDefects.length > 0) {
      run.checkKnownDefects = checked.knownDefects.map((d) => ({
        index: d.index,
        type: d.type,
        version: d.version,
        reference: d.reference,
        explanation: d.explanation,
      }));
      const first = checked.knownDefects[0]!.index;
      for (const p of run.plugins.slice(firstCheck)) if (p.verb === 'CHECK' && p.index > first) p.pastKnownDefectOf = first;
    }
  } catch (e) {
    if (isCheckNotSupported(e)) run.checkSkipped = `cniVersion ${run.cniVersion} has no CHECK (0.4.0 and later)`;
    else {
      run.checkOk = false;
      run.error ??= serializeError(e);
    }
  }
}

async function probeStep(s: RunState): Promise<void> {
  const { run, deps } = s;
  if (!run.addOk) run.probeSkipped = 'ADD failed: nothing to probe';
  else if (!deps.probeNet) run.probeSkipped = 'this engine has no probe agents';
  else {
    s.progress('probe');
    // a failing probe is recorded, never thrown: DEL always follows
    run.probe = await probeLabNetns(
      deps.probeNet,
      { netns: run.netns, result: run.result, portMappings: s.req.capabilities.portMappings },
      { connectTimeoutMs: deps.probeConnectTimeoutMs },
    ).catch((e: unknown) => ({
      measuredAt: new Date().toISOString(),
      measuredBy: 'TCP connect',
      durationMs: 0,
      paths: [],
      errors: [(e as Error).message],
      ok: false,
    }));
    s.emit({ requestId: s.req.requestId, runId: run.id, step: 'probe done', probe: run.probe });
  }
}

/** how the engine's own unwind differs from the lab's list DEL (docs/semantics.md#del-after-failed-add) */
export const ENGINE_UNWIND =
  "Podscope's engine DELs only the plugins its failed ADD executed, in reverse, each with the chain's result as far as it got: a plugin never executed holds nothing";

/**
 * DEL of the whole list in reverse, each with the cached result (after a failed ADD: the chain's result as far as it
 * got), as libcni's DelNetworkList does after a failed ADD. Unlike libcni, every plugin is tried even after one
 * failed (the same DEL the engine runs). After a failed ADD the plugins that never executed their ADD are recorded
 * apart: they were DELed for an ADD they never saw, which the CNI spec says must succeed.
 */
async function delStep(s: RunState): Promise<void> {
  const { run } = s;
  s.phase.current = 'DEL';
  const executed = new Set(run.plugins.filter((p) => p.phase === 'ADD' && p.binary !== undefined).map((p) => p.index));
  let error: unknown;
  try {
    await delNetworkList(s.ctx, s.cache, s.net, s.att);
  } catch (e) {
    error = e;
  }
  const pending = pendingIndices(error);
  if (!run.addOk) {
    const failed = run.plugins.find((p) => p.phase === 'ADD' && !p.ok);
    const dels = run.plugins.filter((p) => p.phase === 'DEL' && !executed.has(p.index));
    run.delAfterFailedAdd = {
      failedIndex: failed?.index ?? -1,
      failedType: failed?.type ?? '',
      neverAdded: dels.map((p) => ({
        index: p.index,
        type: p.type,
        ok: p.ok,
        ...(p.ok ? {} : { error: p.error?.message ?? `exit ${String(p.exitCode)}` }),
      })),
      engine: ENGINE_UNWIND,
    };
  }
  // what held something is judged here; a never-added plugin's DEL failure is reported in delAfterFailedAdd
  const heldLeft = pending === undefined ? error !== undefined : pending.some((i) => run.addOk || executed.has(i));
  run.delOk = !heldLeft;
  if (heldLeft) run.error ??= serializeError(error);
  // the DEL keeps the cache entry while a plugin is pending, for a retry; one that never ran ADD needs no retry
  else if (error !== undefined) await s.cache.remove({ networkName: s.net.list.name, containerId: run.containerId, ifName: LAB_IFNAME });
}

/** the plugin indices a DEL error names as left; undefined when the error is not a per-plugin one */
function pendingIndices(e: unknown): number[] | undefined {
  if (e === undefined) return [];
  const pending = e instanceof PodscopeError ? (e.details as { pending?: Array<{ index: number }> } | undefined)?.pending : undefined;
  return Array.isArray(pending) ? pending.map((p) => p.index) : undefined;
}

/** netns, ADD, CHECK, probe, DEL, with a snapshot around each; the netns is always removed */
async function execute(s: RunState): Promise<[before: Snapshot, afterAdd: Snapshot, afterDel: Snapshot]> {
  const { deps, run } = s;
  const read = () => deps.kernel.read({ ...s.scope, netns: run.netns });
  const empty = (): Snapshot => ({ snapshot: emptySnapshot(), errors: [] });
  const snaps: [Snapshot, Snapshot, Snapshot] = [empty(), empty(), empty()];
  let netnsMade = false;
  try {
    s.progress('netns create');
    await deps.netns.create(undefined, run.netns);
    netnsMade = true;
    // after the netns exists, so what a fresh namespace has (lo) is not counted as the run's
    s.progress('snapshot before ADD');
    snaps[0] = await read();
    await addStep(s);
    s.progress('snapshot after ADD');
    snaps[1] = await read();
    if (run.addOk) await checkStep(s);
    if (s.req.probe) await probeStep(s);
    await delStep(s);
    s.progress('snapshot after DEL');
    snaps[2] = await read();
  } catch (e) {
    run.error ??= serializeError(e);
  } finally {
    if (netnsMade)
      await deps.netns.remove(run.netns).catch((e: unknown) => run.snapshotErrors.push(`netns remove: ${(e as Error).message}`));
  }
  return snaps;
}

/** the verdict (created, left, kept by design), the diff placeholders and the run's success */
function conclude(s: RunState, [before, afterAdd, afterDel]: [Snapshot, Snapshot, Snapshot], durationMs: number): void {
  const { run, req } = s;
  const names = namesFromTraces(run.plugins, {
    containerId: run.containerId,
    network: s.net.list.name,
    netns: run.netns,
    bridges: s.facts.bridges,
  });
  const v = verdict(before.snapshot, afterAdd.snapshot, afterDel.snapshot, names);
  run.kernelCreated = v.created;
  run.leftAfterDel = v.left;
  run.keptByDesign = v.kept;
  run.existedBefore = v.existedBefore;
  Object.assign(run, runChanges(before.watched, afterAdd.watched, afterDel.watched, s.facts.owners));
  if (afterAdd.watched) {
    const mtu = linkMtus(before.watched, afterAdd.watched, run.ifName);
    run.linkMtus = mtu.links;
    if (mtu.warnings.length) run.mtuWarnings = mtu.warnings;
  }
  run.tokens = placeholderTokens(run.plugins, run);
  run.snapshotErrors.push(...before.errors, ...afterAdd.errors, ...afterDel.errors);
  run.durationMs = durationMs;
  // a host value DEL did not put back outlives the run like a leak (the run's own netns goes with it)
  const changedLeft = (run.changedAfterDel ?? []).filter((c) => c.where === 'host' && !c.why);
  run.success =
    run.addOk &&
    run.checkOk !== false &&
    (!req.probe || run.probe?.ok === true) &&
    run.delOk &&
    run.leftAfterDel.length === 0 &&
    changedLeft.length === 0;
}

/** Runs an accepted conflist; whatever happens inside, the run is recorded and returned (only I/O of the records throws). */
export async function runConflist(
  deps: LabRunDeps,
  records: LabRecords,
  req: ParsedRunRequest,
  accepted: AcceptedConflist,
  emit: (p: LabProgress) => void,
): Promise<LabRun> {
  const t0 = performance.now();
  const s = runState(deps, records, req, accepted, emit);
  const { run } = s;
  run.versions = await pluginVersions(accepted.parsed.plugins, deps.options.cniBinDirs);
  // the in-flight record goes down before the netns exists: a later start-up finds every namespace a crash left
  const inflightFile = await records.writeInflight({
    id: run.id,
    owner: await processIdentity(process.pid),
    createdAt: run.createdAt,
    text: req.text,
    capabilities: req.capabilities,
    containerId: run.containerId,
    netns: run.netns,
    ifName: LAB_IFNAME,
  });
  const snaps = await execute(s);
  conclude(s, snaps, performance.now() - t0);
  await records.save(run);
  await records.removeInflight(inflightFile);
  s.progress('done');
  return run;
}
