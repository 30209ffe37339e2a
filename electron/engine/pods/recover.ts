/**
 * Start-up reconciliation: rebuild the store from disk, re-reserve names, and align each sandbox with what its pause's
 * runtime (runc or crun, under the root its record names) and the netns dir say now (a reboot or a crash between two
 * steps leaves either side behind). Then start-up garbage collection of what a killed engine can leave with no record
 * to find it by (startup-gc.ts).
 *
 * Only what this engine owns is ever touched: a container under a pause root counts as ours only when it carries our
 * state dir id (ownership.ts) and is a sandbox container; any other is reported and left alone, even under our root, because a run dir may be
 * shared by mistake with an engine on another state dir. A read-only engine (CLI `pods`, `inspectp`) only looks:
 * what it derives (a pause that died ⇒ NotReady) is shown but never written back, and nothing is stopped or deleted.
 */
import type { StartupGcItem } from '../../../shared/domain/sandbox';
import { waitForOrphanHelpers } from './orphan-helpers';
import { CONTAINER_TYPE_ANNOTATION } from '../runtime/container-spec';
import type { LocatedContainer, RuntimeState } from '../runtime/types';
import type { PodsContext } from './context';
import { OWNER_ANNOTATION } from './ownership';
import { pauseLocationOf, type SandboxRecord } from './record';
import { collectCacheTemps, collectOrphanNetns, gcItem } from './startup-gc';
import { processStartTicks } from '../common/proc';
import { toSummary } from './view';

export interface RecoveryReport {
  loaded: number;
  problems: string[];
  /** pause containers of ours (by the ownership annotation) that no record owns, under any handler's pause root; killed and deleted */
  orphanContainers: string[];
  /** everything start-up collected, each with what was done */
  startupGc: StartupGcItem[];
}

export interface RecoveryOptions {
  /**
   * The previous engine on these dirs died holding them (its pid was still in the lock file): wait for the CNI
   * plugins and runtime commands it left running before touching anything (orphan-helpers.ts).
   */
  uncleanShutdown?: boolean;
  /** how long to wait for them before killing them (default 10 s) */
  orphanWaitMs?: number;
}

export async function recoverSandboxes(ctx: PodsContext, opts: RecoveryOptions = {}): Promise<RecoveryReport> {
  const startupGc: StartupGcItem[] = [];
  const loadProblems = await ctx.store.load((file) =>
    startupGc.push(gcItem('record-temp', { path: file }, 'deleted (a record write interrupted before its rename)')),
  );
  const problems = loadProblems.map((p) => `cannot load ${p.file}: ${p.message} (its sandbox is left alone: fix or remove the file)`);
  const records = ctx.store.all();
  if (opts.uncleanShutdown && !ctx.readOnly) {
    const ids = new Set([...records.map((r) => r.id), ...loadProblems.map((p) => p.id)]);
    const roots = [...new Set([...ctx.runtime.locations(), ...records.map(pauseLocationOf)].map((at) => at.root))];
    for (const h of await waitForOrphanHelpers(ids, roots, opts.orphanWaitMs ?? 10_000)) {
      startupGc.push(
        gcItem(
          'process',
          { id: String(h.pid) },
          h.outcome === 'exited'
            ? `waited ${h.waitedMs} ms for it to finish (left running by the engine that died): ${h.what}`
            : `killed after ${h.waitedMs} ms (left running by the engine that died, still not done): ${h.what}`,
        ),
      );
    }
  }
  for (const rec of records) {
    try {
      ctx.names.reserve(rec.name, rec.id);
    } catch (e) {
      problems.push(`sandbox ${rec.id}: ${(e as Error).message}`);
    }
  }
  // one runtime exec (`state`) per sandbox, all at once: every CLI command pays for this
  await Promise.all(
    records.map((rec) =>
      reconcile(ctx, rec).catch((e: unknown) => {
        // the runtime failing is not the runtime saying "no such container": keep what the record says
        problems.push(`sandbox ${rec.id}: state kept as recorded, ${(e as Error).message}`);
      }),
    ),
  );

  // a record that exists but cannot be read still owns its container (the id is its file name) and whatever its text names
  const known = new Set([...records.map((r) => r.id), ...loadProblems.map((p) => p.id)]);
  const unreadableText = loadProblems.map((p) => p.raw ?? '');
  const orphanContainers: string[] = [];
  const containers = await ctx.runtime.listContainers().catch((e: unknown) => {
    problems.push(`cannot list the pause containers: ${(e as Error).message}`);
    return [] as LocatedContainer[];
  });
  const ownerId = ctx.owner.stateDirId;
  for (const c of containers) {
    if (known.has(c.id)) continue;
    const owner = c.annotations[OWNER_ANNOTATION];
    const type = c.annotations[CONTAINER_TYPE_ANNOTATION];
    if (!ownerId || owner !== ownerId || (type !== undefined && type !== 'sandbox')) {
      // Another engine's (a shared run dir), made before containers were stamped, or an app container (they live
      // under roots of their own; the container recovery owns them): not ours to kill.
      if (!ctx.readOnly) {
        problems.push(
          `${c.at.handler} container ${c.id} (${c.status}) under this engine's ${c.at.handler} root has no record here and is not ours (${
            owner !== ownerId || !ownerId
              ? owner
                ? `owned by state dir id ${owner}`
                : 'no owner annotation'
              : `an app container, ${CONTAINER_TYPE_ANNOTATION}=${type}`
          }): left alone`,
        );
      }
      continue;
    }
    if (ctx.readOnly) continue;
    try {
      await ctx.runtime.stop(c.id, c.at);
      await ctx.runtime.delete(c.id, c.at);
      orphanContainers.push(c.id);
      startupGc.push(gcItem('runc-container', { id: c.id }, `killed and deleted (${c.status}, no record)`));
    } catch (e) {
      problems.push(`orphan ${c.at.handler} container ${c.id}: ${(e as Error).message}`);
      startupGc.push(gcItem('runc-container', { id: c.id }, 'kill and delete', e));
    }
  }

  if (!ctx.readOnly) {
    const referenced = records.flatMap((r) => (r.netnsPath ? [r.netnsPath] : []));
    startupGc.push(...(await collectOrphanNetns(ctx, referenced, unreadableText)));
    startupGc.push(...(await collectCacheTemps(ctx.options.cniCacheDir, known)));
  }
  for (const item of startupGc) {
    const what = item.path ?? item.id ?? '';
    ctx.log?.(`start-up GC: ${item.kind} ${what}: ${item.error ? `${item.action} failed: ${item.error}` : item.action}`);
    if (item.error) problems.push(`start-up GC could not ${item.action} ${item.kind} ${what}: ${item.error}`);
  }
  return { loaded: records.length, problems, orphanContainers, startupGc };
}

async function reconcile(ctx: PodsContext, rec: SandboxRecord): Promise<void> {
  const pause: RuntimeState | undefined = await ctx.runtime.state(rec.id, pauseLocationOf(rec));
  let changed = false;
  if (rec.state === 'Ready' && (!pause || pause.status !== 'running')) {
    rec.state = 'NotReady';
    rec.pause = { ...rec.pause, status: pause?.status ?? 'deleted' };
    changed = true;
  } else if (pause && rec.pause.pid !== pause.pid) {
    rec.pause = { ...rec.pause, pid: pause.pid, startTicks: await processStartTicks(pause.pid), status: pause.status };
    changed = true;
  }
  if (rec.netnsPath && !rec.netnsClosed && (await ctx.netns.isClosed(rec.netnsPath))) {
    rec.netnsClosed = true;
    rec.ip = '';
    rec.additionalIps = [];
    if (rec.state === 'Ready') rec.state = 'NotReady';
    changed = true;
  }
  if (changed) {
    // a read-only store keeps this in memory only: the listing shows the truth, the disk is left as it was
    await ctx.store.save(rec);
    ctx.emit({ type: 'sandbox.changed', id: rec.id, summary: toSummary(rec) });
  }
}
