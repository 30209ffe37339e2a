/**
 * The CNI lab: dry-runs a conflist TEXT in a throwaway netns (ADD, CHECK where the version allows, DEL), with the same
 * exec, stdin building, result cache and DEL unwind as the engine's CNI manager (../cni/network-ops.ts), snapshots
 * the kernel before ADD, after ADD and after DEL, and keeps every run under <stateDir>/lab/<runId>.json.
 * Runs go one at a time: two overlapping runs would see each other's rules in their snapshots.
 */
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PodscopeError, serializeError } from '../../../shared/domain/errors';
import {
  LAB_SAVE_WARNING,
  LabRunRequestSchema,
  LabSaveRequestSchema,
  type LabApi,
  type LabDiff,
  type LabPluginTrace,
  type LabPluginVersion,
  type LabProgress,
  type LabRun,
  type LabRunRequest,
  type LabRunSummary,
  type LabSaveRequest,
  type LabSaveResult,
  type LabValidation,
} from '../../../shared/domain/lab';
import type { CniVerb } from '../../../shared/domain/sandbox';
import type { LoadedNetwork } from '../cni/conf-dir';
import { confListFromBytes } from '../cni/conf-list';
import { cniError } from '../cni/cni-error';
import { addNetworkList, delNetworkList, type Attachment } from '../cni/network-ops';
import { cniEnv } from '../cni/plugin-env';
import { execPlugin, type ExecContext } from '../cni/plugin-exec';
import { resolvePluginBinary } from '../cni/plugin-path';
import { buildPluginStdin } from '../cni/plugin-stdin';
import { ResultCache } from '../cni/result-cache';
import { parseVersionedResult, resultAsVersion, toV1View } from '../cni/result-convert';
import type { CniCallRecord, CniNamespaceOptions } from '../cni/types';
import type { NetnsManager } from '../netns/types';
import type { ProcessRunner } from '../os/exec';
import type { ProbeNet } from '../probe/types';
import { conflistFacts } from './conflist-facts';
import { isInflightOwnerAlive, processIdentity, type InflightRecord } from './inflight';
import { probeLabNetns } from './probe';
import { diffSides, type DiffSide } from './diff';
import { emptySnapshot, type KernelScope, type LabSnapshotReader } from './kernel';
import { validateConflistText, type LiveNetworkUse, type ParsedConflist } from './validate';
import { namesFromTraces, tokensOf, verdict } from './verdict';

export interface LabOptions {
  stateDir: string;
  netnsDir: string;
  cniConfDir: string;
  cniBinDirs: string[];
  pluginTimeoutMs: number;
}

/** A live pod's recorded ADD, for diffing a run against it. */
export interface RecordedAdd {
  id: string;
  name: string;
  plugins: LabPluginTrace[];
  netns?: string;
  result?: unknown;
}

export interface LabDeps {
  options: LabOptions;
  runner: ProcessRunner;
  /** namespaces of the lab's own (never the engine's ownership-stamped cni-* ones) */
  netns: NetnsManager;
  kernel: LabSnapshotReader;
  /** live sandboxes' networks, for the "this run would touch a pod" check */
  liveNetworks(): Promise<LiveNetworkUse[]>;
  /** a sandbox's recorded ADD (NotFound when there is no such sandbox) */
  recordedAdd(id: string): Promise<RecordedAdd>;
  /** probe agents for the optional probe step (runs asking for a probe fail it without one) */
  probeNet?: ProbeNet;
  /** per connect of the probe step (default 1500 ms) */
  probeConnectTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** what start-up did about one interrupted run */
export interface LabRecoveryItem {
  runId: string;
  netns: string;
  /** what was done, in one line */
  action: string;
  /** set when a step failed (what failed stays on the host) */
  error?: string;
}

const IFNAME = 'eth0';
const RUN_FILE = /^[A-Za-z0-9][A-Za-z0-9_.-]*\.json$/;

function newRunId(now = new Date()): string {
  const t = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${t}-${randomBytes(3).toString('hex')}`;
}

async function pluginVersion(type: string, binary: string): Promise<LabPluginVersion> {
  const [bytes, st] = await Promise.all([readFile(binary), stat(binary)]);
  return { type, path: binary, sha256: createHash('sha256').update(bytes).digest('hex'), size: st.size, mtime: st.mtime.toISOString() };
}

export function summarize(run: LabRun): LabRunSummary {
  return {
    id: run.id,
    createdAt: run.createdAt,
    name: run.name,
    cniVersion: run.cniVersion,
    pluginTypes: [...new Set(run.plugins.filter((p) => p.phase === 'ADD').map((p) => p.type))],
    success: run.success,
    addOk: run.addOk,
    leaked: run.leftAfterDel.length,
    durationMs: run.durationMs,
  };
}

export class LabService implements LabApi {
  private readonly listeners = new Set<(p: LabProgress) => void>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: LabDeps) {}

  get dir(): string {
    return path.join(this.deps.options.stateDir, 'lab');
  }

  private get cacheDir(): string {
    return path.join(this.dir, 'cni-cache');
  }

  /** runs in progress: written before the netns exists, removed after the run's record is saved */
  private get inflightDir(): string {
    return path.join(this.dir, 'inflight');
  }

  subscribe(listener: (p: LabProgress) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(p: LabProgress, extra?: (p: LabProgress) => void): void {
    for (const l of [...this.listeners, ...(extra ? [extra] : [])]) {
      try {
        l(p);
      } catch {
        // a broken listener must not break the run
      }
    }
  }

  async validate(text: string): Promise<LabValidation> {
    const v = await validateConflistText(text, this.deps.options.cniBinDirs, await this.deps.liveNetworks().catch(() => []));
    delete v.parsed;
    return v;
  }

  run(req: LabRunRequest, onProgress?: (p: LabProgress) => void): Promise<LabRun> {
    const next = this.queue.catch(() => undefined).then(() => this.runNow(req, onProgress));
    this.queue = next;
    return next;
  }

  private async runNow(raw: LabRunRequest, onProgress?: (p: LabProgress) => void): Promise<LabRun> {
    const req = LabRunRequestSchema.parse(raw);
    const { options } = this.deps;
    const validation = await validateConflistText(req.text, options.cniBinDirs, await this.deps.liveNetworks());
    if (!validation.ok || !validation.parsed) {
      const first = validation.errors[0];
      const where = first?.line !== undefined ? ` (line ${first.line}, column ${first.column})` : '';
      throw new PodscopeError(
        'InvalidArgument',
        `conflist refused, nothing was run: ${first?.path ? `${first.path}: ` : ''}${first?.message ?? 'invalid'}${where}`,
        { details: { errors: validation.errors } },
      );
    }
    if (validation.conflicts.length > 0 && !req.force) {
      const list = validation.conflicts
        .map((c) => `${c.sandboxName || c.sandboxId.slice(0, 13)} (${c.network}): ${c.shares.join(', ')}`)
        .join('; ');
      throw new PodscopeError(
        'FailedPrecondition',
        `this conflist shares host networking with live sandboxes, so a run would touch them: ${list}. Run with force to proceed anyway.`,
        {
          details: { conflicts: validation.conflicts },
        },
      );
    }
    const parsed: ParsedConflist = validation.parsed;
    const t0 = performance.now();
    const id = newRunId();
    const containerId = `podscope-lab-${id}`;
    const netnsPath = path.join(options.netnsDir, `podscope-lab-${id}`);
    const facts = conflistFacts(parsed.name, parsed.plugins);
    const cache = new ResultCache(this.cacheDir);
    const scope: KernelScope = { ipamDirs: facts.ipamDirs, cacheResultsDir: cache.dir, containerId };
    const progress = (step: string, plugin?: LabPluginTrace) =>
      this.emit({ requestId: req.requestId, runId: id, step, ...(plugin ? { plugin } : {}) }, onProgress);

    const run: LabRun = {
      id,
      createdAt: new Date().toISOString(),
      text: req.text,
      name: parsed.name,
      cniVersion: parsed.cniVersion,
      capabilities: req.capabilities,
      containerId,
      netns: netnsPath,
      ifName: IFNAME,
      plugins: [],
      versions: [],
      addOk: false,
      delOk: false,
      kernelCreated: [],
      leftAfterDel: [],
      keptByDesign: [],
      forced: validation.conflicts,
      tokens: {},
      snapshotErrors: [],
      durationMs: 0,
      success: false,
    };
    const types = new Set<string>();
    for (const p of parsed.plugins) {
      types.add(p.type as string);
      const ipam = p.ipam as { type?: unknown } | undefined;
      if (ipam && typeof ipam.type === 'string') types.add(ipam.type);
    }
    for (const type of types) {
      const binary = await resolvePluginBinary(type, options.cniBinDirs);
      if (binary)
        run.versions.push(await pluginVersion(type, binary).catch(() => ({ type, path: binary, sha256: '', size: 0, mtime: '' })));
    }

    let phase: 'ADD' | 'CHECK' | 'DEL' = 'ADD';
    const record = (r: CniCallRecord) => {
      const trace = pluginTrace(r, phase);
      if (!trace) return;
      run.plugins.push(trace);
      progress(`${trace.verb} ${trace.type}`, trace);
    };
    const ctx: ExecContext = {
      runner: this.deps.runner,
      binDirs: options.cniBinDirs,
      baseEnv: this.deps.env ?? process.env,
      timeoutMs: options.pluginTimeoutMs,
      record,
    };
    const list = confListFromBytes(Buffer.from(req.text));
    // only the text is run: plugins from <confdir>/<network>/*.conf are not added
    const net: LoadedNetwork = { list, ifName: IFNAME, builtin: false, binaries: [] };
    const opts: CniNamespaceOptions = { args: labCniArgs(id, containerId), capabilities: capabilityArgs(req.capabilities) };
    const att: Attachment = { containerId, netns: netnsPath, opts };

    await mkdir(this.dir, { recursive: true });
    // the in-flight record goes down before the netns exists: a later start-up finds every namespace a crash left
    const inflightFile = await this.writeInflight({
      id,
      owner: await processIdentity(process.pid),
      createdAt: run.createdAt,
      text: req.text,
      capabilities: req.capabilities,
      containerId,
      netns: netnsPath,
      ifName: IFNAME,
    });
    let before = { snapshot: emptySnapshot(), errors: [] as string[] };
    let afterAdd = { snapshot: emptySnapshot(), errors: [] as string[] };
    let afterDel = { snapshot: emptySnapshot(), errors: [] as string[] };
    let netnsMade = false;
    try {
      progress('netns create');
      await this.deps.netns.create(undefined, netnsPath);
      netnsMade = true;
      // after the netns exists, so what a fresh namespace has (lo) is not counted as the run's
      progress('snapshot before ADD');
      before = await this.deps.kernel.read({ ...scope, netns: netnsPath });
      try {
        const attached = await addNetworkList(ctx, cache, net, att);
        run.addOk = true;
        run.result = attached.result;
      } catch (e) {
        run.error = serializeError(e);
      }
      progress('snapshot after ADD');
      afterAdd = await this.deps.kernel.read({ ...scope, netns: netnsPath });
      if (run.addOk) {
        const cached = await cache.readResult({ networkName: list.name, containerId, ifName: IFNAME });
        if (cached.state === 'found') run.rawResult = cached.result;
        if (req.skipCheck) run.checkSkipped = 'skipped on request';
        else if (!validation.checkSupported)
          run.checkSkipped = parsed.disableCheck ? 'disableCheck is set' : `cniVersion ${parsed.cniVersion} has no CHECK (0.4.0 and later)`;
        else {
          phase = 'CHECK';
          try {
            await checkNetworkList(ctx, cache, net, att);
            run.checkOk = true;
          } catch (e) {
            run.checkOk = false;
            run.error ??= serializeError(e);
          }
        }
      }
      if (req.probe) {
        if (!run.addOk) run.probeSkipped = 'ADD failed: nothing to probe';
        else if (!this.deps.probeNet) run.probeSkipped = 'this engine has no probe agents';
        else {
          progress('probe');
          // a failing probe is recorded, never thrown: DEL always follows
          run.probe = await probeLabNetns(
            this.deps.probeNet,
            { netns: netnsPath, result: run.result, portMappings: req.capabilities.portMappings },
            { connectTimeoutMs: this.deps.probeConnectTimeoutMs },
          ).catch((e: unknown) => ({
            measuredAt: new Date().toISOString(),
            measuredBy: 'TCP connect',
            durationMs: 0,
            paths: [],
            errors: [(e as Error).message],
            ok: false,
          }));
          this.emit({ requestId: req.requestId, runId: id, step: 'probe done', probe: run.probe }, onProgress);
        }
      }
      phase = 'DEL';
      // after a failed ADD only the plugins that really ran hold anything (the engine's unwind does the same)
      const executed = new Set(run.plugins.filter((p) => p.phase === 'ADD' && p.binary !== undefined).map((p) => p.index));
      try {
        await delNetworkList(ctx, cache, net, att, run.addOk ? undefined : executed);
        run.delOk = true;
      } catch (e) {
        run.error ??= serializeError(e);
      }
      progress('snapshot after DEL');
      afterDel = await this.deps.kernel.read({ ...scope, netns: netnsPath });
    } catch (e) {
      run.error ??= serializeError(e);
    } finally {
      if (netnsMade)
        await this.deps.netns.remove(netnsPath).catch((e: unknown) => run.snapshotErrors.push(`netns remove: ${(e as Error).message}`));
    }
    const names = namesFromTraces(run.plugins, { containerId, network: list.name, netns: netnsPath, bridges: facts.bridges });
    const v = verdict(before.snapshot, afterAdd.snapshot, afterDel.snapshot, names);
    run.kernelCreated = v.created;
    run.leftAfterDel = v.left;
    run.keptByDesign = v.kept;
    run.tokens = tokensOf(names);
    run.snapshotErrors.push(...before.errors, ...afterAdd.errors, ...afterDel.errors);
    run.durationMs = performance.now() - t0;
    run.success =
      run.addOk && run.checkOk !== false && (!req.probe || run.probe?.ok === true) && run.delOk && run.leftAfterDel.length === 0;
    await this.save_(run);
    await rm(inflightFile, { force: true });
    progress('done');
    return run;
  }

  private async writeInflight(rec: InflightRecord): Promise<string> {
    await mkdir(this.inflightDir, { recursive: true });
    const file = path.join(this.inflightDir, `${rec.id}.json`);
    const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
    await writeFile(tmp, JSON.stringify(rec));
    await rename(tmp, file);
    return file;
  }

  /**
   * Start-up GC of runs an engine was killed in: for every in-flight record whose owner process is gone, CNI DEL
   * with the recorded conflist and capability args (so portmap, bandwidth and host-local release what ADD made, as
   * the run's own DEL would have), then the netns is removed and the run is kept as a record marked `recovered`.
   * Only namespaces named by this state dir's records are touched: a podscope-lab-* namespace without one belongs
   * to another engine (the record is always written before the namespace is created).
   */
  async recoverInterrupted(): Promise<LabRecoveryItem[]> {
    let names: string[];
    try {
      names = (await readdir(this.inflightDir)).filter((n) => RUN_FILE.test(n));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const items: LabRecoveryItem[] = [];
    for (const n of names) {
      const file = path.join(this.inflightDir, n);
      let rec: InflightRecord;
      try {
        rec = JSON.parse(await readFile(file, 'utf8')) as InflightRecord;
      } catch {
        continue; // a half-written record (its rename never happened) is skipped: the .tmp name does not match
      }
      if (await isInflightOwnerAlive(rec.owner)) continue;
      items.push(await this.recoverOne(rec, file));
    }
    return items;
  }

  private async recoverOne(rec: InflightRecord, file: string): Promise<LabRecoveryItem> {
    const { options } = this.deps;
    const actions: string[] = [];
    const errors: string[] = [];
    const traces: LabPluginTrace[] = [];
    // a record saved by an earlier recovery whose DEL failed does not count as a finished run: DEL is tried again
    const saved = await this.get(rec.id).then(
      (r) => (r.recovered ? undefined : r),
      () => undefined,
    );
    const netnsThere = !(await this.deps.netns.isClosed(rec.netns).catch(() => false));
    if (!saved) {
      let list: ReturnType<typeof confListFromBytes> | undefined;
      try {
        list = confListFromBytes(Buffer.from(rec.text));
      } catch (e) {
        errors.push(`recorded conflist unreadable: ${(e as Error).message}`);
      }
      if (list) {
        const ctx: ExecContext = {
          runner: this.deps.runner,
          binDirs: options.cniBinDirs,
          baseEnv: this.deps.env ?? process.env,
          timeoutMs: options.pluginTimeoutMs,
          record: (r) => {
            const trace = pluginTrace(r, 'DEL');
            if (trace) traces.push(trace);
          },
        };
        const net: LoadedNetwork = { list, ifName: rec.ifName, builtin: false, binaries: [] };
        const att: Attachment = {
          containerId: rec.containerId,
          netns: rec.netns,
          opts: { args: labCniArgs(rec.id, rec.containerId), capabilities: capabilityArgs(rec.capabilities) },
        };
        try {
          // DEL of every plugin: which ones ADD reached is unknown, and DEL of what was never added is a no-op
          await delNetworkList(ctx, new ResultCache(this.cacheDir), net, att);
          actions.push(`CNI DEL with the recorded conflist (${traces.length} plugin execs): ok`);
        } catch (e) {
          errors.push(`CNI DEL: ${(e as Error).message}`);
        }
      }
    } else actions.push('the run had finished (its record was saved); only the in-flight marker was left');
    if (netnsThere) {
      try {
        await this.deps.netns.remove(rec.netns);
        actions.push(`netns ${path.basename(rec.netns)} unmounted and deleted`);
      } catch (e) {
        errors.push(`netns remove: ${(e as Error).message}`);
      }
    }
    if (!saved) {
      const recovered: LabRun = {
        id: rec.id,
        createdAt: rec.createdAt,
        text: rec.text,
        name: safeName(rec.text),
        cniVersion: safeVersion(rec.text),
        capabilities: rec.capabilities,
        containerId: rec.containerId,
        netns: rec.netns,
        ifName: rec.ifName,
        plugins: traces,
        versions: [],
        addOk: false,
        delOk: errors.length === 0,
        error: { code: 'Canceled', message: `interrupted: the engine (pid ${rec.owner.pid}) ended mid-run; a later start-up tore it down` },
        kernelCreated: [],
        leftAfterDel: [],
        keptByDesign: [],
        forced: [],
        tokens: {},
        snapshotErrors: errors,
        durationMs: 0,
        recovered: {
          at: new Date().toISOString(),
          actions: [...actions, ...errors.map((e) => `FAILED ${e}`)],
          interruptedPid: rec.owner.pid,
        },
        success: false,
      };
      await this.save_(recovered).catch((e: unknown) => errors.push(`record save: ${(e as Error).message}`));
    }
    // with a failed step the marker stays, so the next start-up tries again
    if (errors.length === 0) await rm(file, { force: true });
    return {
      runId: rec.id,
      netns: rec.netns,
      action: actions.join('; ') || 'nothing to do',
      ...(errors.length ? { error: errors.join('; ') } : {}),
    };
  }

  private async save_(run: LabRun): Promise<void> {
    const file = path.join(this.dir, `${run.id}.json`);
    const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
    await writeFile(tmp, JSON.stringify(run, null, 2));
    await rename(tmp, file);
  }

  async list(): Promise<LabRunSummary[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => RUN_FILE.test(n));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const out: LabRunSummary[] = [];
    for (const n of names) {
      try {
        out.push(summarize(JSON.parse(await readFile(path.join(this.dir, n), 'utf8')) as LabRun));
      } catch {
        // a damaged record is skipped, not fatal to the list
      }
    }
    return out.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  async get(id: string): Promise<LabRun> {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(id)) throw new PodscopeError('InvalidArgument', `not a lab run id: ${JSON.stringify(id)}`);
    const exact = path.join(this.dir, `${id}.json`);
    const text = await readFile(exact, 'utf8').catch(async () => {
      // a unique prefix works, as sandbox ids do
      const matches = (await this.list()).filter((r) => r.id.startsWith(id));
      if (matches.length === 1) return readFile(path.join(this.dir, `${matches[0]!.id}.json`), 'utf8');
      throw new PodscopeError(
        'NotFound',
        matches.length > 1 ? `lab run prefix ${id} is ambiguous (${matches.length} runs)` : `no lab run ${id}`,
      );
    });
    return JSON.parse(text) as LabRun;
  }

  async diff(a: string, b: string): Promise<LabDiff> {
    const side = async (ref: string): Promise<DiffSide> => {
      if (ref.startsWith('sandbox:')) {
        const rec = await this.deps.recordedAdd(ref.slice('sandbox:'.length));
        const names = namesFromTraces(rec.plugins, { containerId: rec.id, network: '', netns: rec.netns ?? '', bridges: [] });
        const tokens = tokensOf(names);
        // a pod's network name is part of its chain hashes, not of anything the config sets: leave the derived names out
        for (const k of Object.keys(tokens)) if (/^<(masq-chain|dnat-chain|ifb)>$/.test(tokens[k]!)) delete tokens[k];
        return {
          kind: 'sandbox',
          id: rec.id,
          label: `pod ${rec.name || rec.id.slice(0, 13)}`,
          plugins: rec.plugins,
          tokens,
          result: rec.result,
        };
      }
      const run = await this.get(ref);
      return {
        kind: 'run',
        id: run.id,
        label: `run ${run.id} (${run.name})`,
        plugins: run.plugins,
        tokens: run.tokens,
        result: run.result,
        kernelCreated: run.kernelCreated,
        leftAfterDel: run.leftAfterDel,
      };
    };
    return diffSides(await side(a), await side(b));
  }

  /** Atomic write into the conf dir (temp file + rename in the same dir), the previous file kept as <file>.bak-<time>. */
  async save(raw: LabSaveRequest): Promise<LabSaveResult> {
    const req = LabSaveRequestSchema.parse(raw);
    const v = await validateConflistText(req.text, this.deps.options.cniBinDirs);
    if (!v.ok || !v.parsed) {
      const first = v.errors[0];
      throw new PodscopeError(
        'InvalidArgument',
        `conflist refused, nothing was written: ${first?.path ? `${first.path}: ` : ''}${first?.message ?? 'invalid'}${first?.line !== undefined ? ` (line ${first.line}, column ${first.column})` : ''}`,
        { details: { errors: v.errors } },
      );
    }
    const dir = this.deps.options.cniConfDir;
    const fileName = req.fileName ?? `${v.parsed.name}.conflist`;
    const target = path.join(dir, fileName);
    await mkdir(dir, { recursive: true });
    let backup: string | undefined;
    const existing = await stat(target).catch(() => undefined);
    if (existing) {
      backup = `${target}.bak-${new Date()
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z')}`;
      await copyFile(target, backup);
    }
    // the temp name has no conf extension, so a watcher's reload in between never loads half a file
    const tmp = path.join(dir, `.podscope-lab-${randomBytes(4).toString('hex')}.tmp`);
    try {
      await writeFile(tmp, req.text.endsWith('\n') ? req.text : `${req.text}\n`, { mode: 0o644 });
      await rename(tmp, target);
    } catch (e) {
      await rm(tmp, { force: true });
      throw new PodscopeError('RuntimeError', `cannot write ${target}: ${(e as Error).message}`, { cause: e });
    }
    return { path: target, ...(backup ? { backup } : {}), warning: LAB_SAVE_WARNING };
  }
}

/** CHECK of one list in order with the cached ADD result as prevResult (libcni CheckNetworkList stops at the first failure). */
export async function checkNetworkList(ctx: ExecContext, cache: ResultCache, net: LoadedNetwork, att: Attachment): Promise<void> {
  const { list, ifName } = net;
  const cached = await cache.readResult({ networkName: list.name, containerId: att.containerId, ifName });
  if (cached.state !== 'found') throw cniError(`CHECK of ${list.name}: no cached ADD result (${cached.state})`, { network: list.name });
  const prevResult = resultAsVersion(toV1View(parseVersionedResult(cached.result)), list.cniVersion);
  const verb: CniVerb = 'CHECK';
  const env = cniEnv({ verb, containerId: att.containerId, netns: att.netns, ifName, args: att.opts.args, binDirs: ctx.binDirs });
  for (const [index, plugin] of list.plugins.entries()) {
    const stdin = buildPluginStdin({
      networkName: list.name,
      cniVersion: list.cniVersion,
      plugin,
      prevResult,
      capabilityArgs: att.opts.capabilities,
    });
    await execPlugin(ctx, { network: list.name, ifName, verb, index, type: plugin.type, stdin, cniEnv: env }, () => undefined);
  }
}

function labCniArgs(id: string, containerId: string): Array<[string, string]> {
  return [
    ['IgnoreUnknown', '1'],
    ['K8S_POD_NAMESPACE', 'podscope-lab'],
    ['K8S_POD_NAME', id],
    ['K8S_POD_INFRA_CONTAINER_ID', containerId],
  ];
}

function safeName(text: string): string {
  try {
    const v = (JSON.parse(text) as { name?: unknown }).name;
    return typeof v === 'string' ? v : '';
  } catch {
    return '';
  }
}

function safeVersion(text: string): string {
  try {
    const v = (JSON.parse(text) as { cniVersion?: unknown }).cniVersion;
    return typeof v === 'string' ? v : '';
  } catch {
    return '';
  }
}

/** The user's capability args as plugins read them in runtimeConfig; bandwidth's unset burst is containerd's 2^32-1. */
export function capabilityArgs(c: LabRun['capabilities']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (c.portMappings?.length)
    out.portMappings = c.portMappings.map((m) => ({
      hostPort: m.hostPort,
      containerPort: m.containerPort,
      protocol: m.protocol,
      ...(m.hostIP ? { hostIP: m.hostIP } : {}),
    }));
  if (c.bandwidth) {
    const MAX_BURST = 4294967295;
    const b = c.bandwidth;
    out.bandwidth = {
      ingressRate: b.ingressRate ?? 0,
      ingressBurst: b.ingressBurst ?? (b.ingressRate ? MAX_BURST : 0),
      egressRate: b.egressRate ?? 0,
      egressBurst: b.egressBurst ?? (b.egressRate ? MAX_BURST : 0),
    };
  }
  if (c.dns) out.dns = { servers: c.dns.servers ?? [], searches: c.dns.searches ?? [], options: c.dns.options ?? [] };
  if (c.ips?.length) out.ips = c.ips;
  if (c.mac) out.mac = c.mac;
  if (c.cgroupPath) out.cgroupPath = c.cgroupPath;
  return out;
}

/** a plugin exec as the lab records it (other trace steps are not plugin execs: undefined) */
function pluginTrace(r: CniCallRecord, phase: LabPluginTrace['phase']): LabPluginTrace | undefined {
  if (r.step !== 'cni.plugin' || !r.plugin) return undefined;
  return {
    phase,
    verb: r.plugin.verb,
    index: r.plugin.index,
    type: r.plugin.type,
    binary: r.plugin.binary,
    stdin: r.plugin.stdin,
    stdout: r.plugin.stdout,
    stderr: r.plugin.stderr,
    exitCode: r.plugin.exitCode,
    durationMs: r.durationMs,
    ok: r.ok,
    startedAt: r.startedAt,
    ...(r.error ? { error: serializeError(r.error) } : {}),
  };
}
