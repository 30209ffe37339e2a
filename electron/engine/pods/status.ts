/** PodSandboxStatus and ListPodSandbox (docs/semantics.md#status-and-list): cheap reads of the store plus a liveness check of the pause pid. */
import type { PauseExit, SandboxFilter, SandboxStatus, SandboxSummary } from '../../../shared/domain/sandbox';
import { describePauseExit } from '../../../shared/domain/sandbox-release';
import { StepRecorder } from '../common/steps';
import type { PodsContext } from './context';
import type { SandboxRecord } from './record';
import { toStatus, toSummary } from './view';
import type { ProbeNet } from '../netns/probe-net';
import { hostPortConflicts } from './host-ports';
import { observeExit, runsUnderLiveMonitor, SIGNALS } from '../common/proc';

export async function sandboxStatus(ctx: PodsContext, idOrPrefix: string): Promise<SandboxStatus> {
  const rec = ctx.store.pods.get(idOrPrefix);
  await refreshLiveness(ctx, rec);
  // A verb in flight changes the record between saves (trace entries, network): read it live then; otherwise the
  // view built at the last save is the truth.
  return ctx.locks.isHeld(rec.id)
    ? toStatus(rec, rec.netnsPath === undefined || rec.netnsClosed === true)
    : ctx.store.index.status(rec.id)!;
}

/**
 * A filtered list whose matches are this few re-reads their pause liveness first; a longer one relies on the
 * background poll (every PAUSE_POLL_MS, which announces a change as an event), so a list of 1,000 pods costs no
 * /proc reads, as containerd's list costs no shim calls.
 */
const LIVENESS_ON_LIST_MAX = 32;

export async function listSandboxes(ctx: PodsContext, filter: SandboxFilter = {}): Promise<SandboxSummary[]> {
  // An id filter matches by prefix (a unique prefix is what crictl passes; a shared one lists every match).
  const ids = ctx.store.index.candidates({ idPrefix: filter.id, state: filter.state, labels: filter.labelSelector });
  if (ids.length <= LIVENESS_ON_LIST_MAX) {
    await Promise.all(ids.map((id) => ctx.store.get(id)).map((rec) => (rec ? refreshLiveness(ctx, rec) : undefined)));
  }
  const nameRe = filter.name ? safeRegExp(filter.name) : undefined;
  const nsRe = filter.namespace ? safeRegExp(filter.namespace) : undefined;
  const out: SandboxSummary[] = [];
  for (const id of ids) {
    const rec = ctx.store.get(id);
    if (!rec) continue;
    const s = ctx.locks.isHeld(id) ? toSummary(rec) : ctx.store.index.summary(id)!;
    if (filter.state && s.state !== filter.state) continue; // liveness may have just changed it
    if (nameRe && !nameRe.test(s.metadata.name)) continue;
    if (nsRe && !nsRe.test(s.metadata.namespace)) continue;
    out.push(s);
  }
  return out;
}

/** crictl matches --name/--namespace as regular expressions; an invalid one is matched literally. */
function safeRegExp(text: string): RegExp {
  try {
    return new RegExp(text);
  } catch {
    return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  }
}

/**
 * containerd learns of a pause exit from its shim; the engine has no subreaper, so it looks at the pid instead:
 * gone or a zombie means the pause process ended and the sandbox is NotReady (its network stays until stop).
 */
export async function refreshLiveness(ctx: PodsContext, rec: SandboxRecord, opts: { exact?: boolean } = {}): Promise<void> {
  if (rec.state !== 'Ready' || rec.pause.pid === undefined) return;
  // The common answer (alive) costs no lock: status and short lists ask on every call, so it is the cheap one under
  // a live conmon (runsUnderLiveMonitor), else one /proc read. A verb in flight owns the record, so it is left alone
  // then, as below.
  if (ctx.locks.isHeld(rec.id)) return;
  if (!opts.exact && runsUnderLiveMonitor(ctx.processExists, rec.pause.pid, rec.pause.monitorPid)) return;
  if (await ctx.processAlive(rec.pause.pid, rec.pause.startTicks)) return;
  // Dead: under the sandbox's lock, and skipped while a verb holds it, since a save that raced a stop or remove
  // could otherwise write an older state over it.
  await ctx.locks.tryRun(rec.id, async () => {
    if (ctx.store.get(rec.id) !== rec || rec.state !== 'Ready' || rec.pause.pid === undefined) return;
    const pid = rec.pause.pid;
    // read before the check below: a zombie still carries its wait status until it is reaped
    const zombie = observeExit(pid, rec.pause.startTicks);
    if (await ctx.processAlive(pid, rec.pause.startTicks)) return;
    const at = new Date().toISOString();
    // NotReady at once: while conmon's exit file is awaited (up to EXIT_FILE_GRACE_MS, longer on a loaded host), every
    // read (a status, a list) answers from this record because the lock is held, so they agree from this moment on
    rec.state = 'NotReady';
    rec.pause = { ...rec.pause, status: 'stopped' };
    // a pause under conmon has its exit in conmon's exit file; one from an older engine (no conmon) has the zombie read
    const exit = (await monitoredExit(ctx, rec)) ?? zombie;
    rec.pauseExit = { at, ...exit };
    // The network stays until a stop (as in containerd, whose StopPodSandbox then releases it): the trace says so.
    new StepRecorder(rec, 'watch', (entry) => ctx.emit({ type: 'sandbox.progress', id: rec.id, entry })).add({
      step: 'pause.exit',
      label: `${describePauseExit(rec.pauseExit)}; the sandbox is NOTREADY and keeps its network until stopped`,
      startedAt: rec.pauseExit.at,
      durationMs: 0,
      ok: false,
      detail: { pid, ...exit },
    });
    await ctx.store.save(rec);
    ctx.emit({ type: 'sandbox.changed', id: rec.id, summary: toSummary(rec) });
  });
}

/** How long after the pause is gone a missing exit file is waited for while its conmon still runs (it writes it then exits). */
const EXIT_FILE_GRACE_MS = 3000;

/**
 * The pause's exit as its conmon wrote it (docs/semantics.md#container-monitor): the code, 128+N for signal N (as
 * conmon writes a death by signal), and the finish time. undefined when no conmon watched it or none wrote the file.
 */
async function monitoredExit(ctx: PodsContext, rec: SandboxRecord): Promise<Omit<PauseExit, 'at'> | undefined> {
  const { monitorPid, bundle } = rec.pause;
  if (monitorPid === undefined || !bundle) return undefined;
  let info = await ctx.runtime.exitInfo(rec.id, bundle);
  // conmon reaps the pause, then writes the file: look early and then less often while it still runs
  const t0 = Date.now();
  for (let delay = 2; !info && Date.now() - t0 < EXIT_FILE_GRACE_MS; delay = Math.min(delay * 2, 20)) {
    const monitorAlive = await ctx.processAlive(monitorPid).catch(() => false);
    await new Promise((r) => setTimeout(r, delay));
    info = await ctx.runtime.exitInfo(rec.id, bundle);
    // a conmon gone before this last read wrote the file before it went, or never will
    if (!monitorAlive) break;
  }
  if (!info) return undefined;
  const signalNumber = info.exitCode - 128;
  return {
    exitCode: info.exitCode,
    ...(signalNumber > 0 && signalNumber <= 64 ? { signal: SIGNALS[signalNumber] ?? `signal ${signalNumber}` } : {}),
    finishedAt: new Date(Number(BigInt(info.finishedAtNs) / 1_000_000n)).toISOString(),
  };
}

/**
 * Status with the pod's host-port clashes. Only a ready pod with host ports can clash, and only with the other such
 * pods (the read index keeps them): a Status costs the same at 1,000 pods as at 20. The view is shared until the
 * next save, so a clash goes on a copy.
 */
export async function sandboxStatusWithClashes(ctx: PodsContext, probeNet: ProbeNet | undefined, id: string): Promise<SandboxStatus> {
  const status = await sandboxStatus(ctx, id);
  const rec = ctx.store.get(status.id);
  if (!rec || rec.state !== 'Ready' || !ctx.store.index.holdsHostPorts(rec.id)) return status;
  const conflicts = await hostPortConflicts(ctx, probeNet, rec);
  return conflicts.length === 0 ? status : { ...status, hostPortConflicts: conflicts };
}
