/**
 * StopPodSandbox (docs/semantics.md#stop-sandbox): unknown id is a success; kill the pause container and unmount shm while CNI DEL runs
 * (netns path "" once the namespace is closed), then remove the netns. Repeating it repeats the DEL, which plugins must tolerate.
 */
import { serializeError } from '../../../shared/domain/errors';
import type { PodsContext } from './context';
import { runtimeReporter } from './hooks';
import { pauseLocationOf, type SandboxRecord } from './record';
import { teardownNetwork } from './teardown';
import { pendingStep, setPending } from './pending-cleanup';
import { StepRecorder } from '../common/steps';
import { toSummary } from './view';

export async function stopSandbox(ctx: PodsContext, idOrPrefix: string): Promise<void> {
  const id = ctx.store.index.resolve(idOrPrefix);
  if (id === undefined) return;
  await ctx.locks.run(id, async () => {
    const rec = ctx.store.get(id);
    if (rec) await stopLocked(ctx, rec, 'stop');
  });
}

/** The stop path; the caller holds the sandbox's lock. */
export async function stopLocked(ctx: PodsContext, rec: SandboxRecord, phase: 'stop' | 'remove'): Promise<void> {
  const trace = new StepRecorder(rec, phase, (entry) => ctx.emit({ type: 'sandbox.progress', id: rec.id, entry }));
  const signal = AbortSignal.timeout(ctx.cleanupTimeoutMs);
  try {
    // containerd stops every container of the pod first (timeout 0), then the sandbox (sandbox_stop.go)
    if (ctx.podContainers) await trace.step('containers.stop', "stop the pod's containers", () => ctx.podContainers!.stopAll(rec.id));
    // The pause container and the network are independent until the netns goes (containerd stops the pause first,
    // CRI-O tears the network down first): both at once, then the netns once neither needs it.
    const stopPause = async () => {
      // Always, not only when Ready: NotReady can come from a guess (a /proc read, a runc error at start-up), and
      // stopping a stopped or unknown container is a cheap no-op. The shm unmount is lazy and the pause holds its
      // own bind of the tmpfs, so it need not wait for the kill: both at once (each is a process of its own, and at
      // a node's worth of pods their waits add up).
      const [killed, unmounted] = await Promise.allSettled([
        ctx.runtime.stop(rec.id, pauseLocationOf(rec), { signal, report: runtimeReporter(trace) }).then(() => {
          rec.pause = { ...rec.pause, status: 'stopped' };
        }),
        trace.step('sandbox.shm', 'unmount /dev/shm', () => ctx.files.unmountShm({ runDir: rec.runDir, signal })),
      ]);
      if (killed.status === 'rejected') throw killed.reason;
      if (unmounted.status === 'rejected') throw unmounted.reason;
    };
    const releaseNetwork = async (netnsPath: string) => {
      const closed = await ctx.netns.isClosed(netnsPath);
      await teardownNetwork(ctx, rec, trace, closed ? '' : netnsPath, signal);
    };
    const [pauseOutcome, networkOutcome] = await Promise.allSettled([
      stopPause(),
      rec.netnsPath ? releaseNetwork(rec.netnsPath) : Promise.resolve(),
    ]);
    setPending(
      rec,
      'pause',
      pauseOutcome.status === 'rejected'
        ? [
            pendingStep(
              'pause',
              'kill the pause container and unmount /dev/shm',
              [`${pauseLocationOf(rec).handler} container ${rec.id}`],
              pauseOutcome.reason,
            ),
          ]
        : [],
    );
    if (networkOutcome.status === 'rejected') {
      // the netns stays while a plugin's DEL is pending: the bridge plugin finds the pod's addresses through it
      if (rec.netnsPath)
        setPending(rec, 'netns', [
          pendingStep(
            'netns',
            `remove network namespace ${rec.netnsPath}`,
            [],
            "kept for the pending CNI DEL (the bridge plugin reads the pod's addresses from it)",
          ),
        ]);
      throw networkOutcome.reason;
    }
    if (pauseOutcome.status === 'rejected') throw pauseOutcome.reason;
    if (rec.netnsPath) {
      const netnsPath = rec.netnsPath;
      try {
        await trace.step('netns.remove', `remove network namespace ${netnsPath}`, () => ctx.netns.remove(netnsPath));
      } catch (error) {
        setPending(rec, 'netns', [pendingStep('netns', `remove network namespace ${netnsPath}`, [], error)]);
        throw error;
      }
      rec.netnsClosed = true;
    }
    // everything a stop releases is released; sandbox files (if their removal failed during a run) are remove's job
    setPending(rec, 'netns', []);
    setPending(rec, 'other', []);
    rec.state = 'NotReady';
    rec.ip = '';
    rec.additionalIps = [];
    rec.stoppedAt ??= new Date().toISOString();
    rec.stopCompleted = true;
    delete rec.lastError;
  } catch (error) {
    rec.lastError = serializeError(error);
    // the pause is gone but something is left: listed NOTREADY with the pending cleanup, never READY
    if (rec.state === 'Ready' && rec.pause.status === 'stopped') rec.state = 'NotReady';
    throw error;
  } finally {
    await ctx.store.save(rec);
    ctx.emit({ type: 'sandbox.changed', id: rec.id, summary: toSummary(rec) });
  }
}
