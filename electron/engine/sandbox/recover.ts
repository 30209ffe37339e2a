/**
 * Start-up reconciliation: rebuild the store from disk, re-reserve names, and align each sandbox with what runc and
 * the netns dir say now (a reboot or a crash between two steps leaves either side behind).
 */
import type { PauseState } from '../runtime/types';
import type { EngineContext } from './context';
import type { SandboxRecord } from './record';
import { processStartTicks } from './status';
import { toSummary } from './view';

export interface RecoveryReport {
  loaded: number;
  problems: string[];
  /** runc containers under the engine's root that no record owns; deleted */
  orphanContainers: string[];
}

export async function recoverSandboxes(ctx: EngineContext): Promise<RecoveryReport> {
  const loadProblems = await ctx.store.load();
  const problems = loadProblems.map((p) => `cannot load ${p.file}: ${p.message} (its sandbox is left alone: fix or remove the file)`);
  const records = ctx.store.all();
  for (const rec of records) {
    try {
      ctx.names.reserve(rec.name, rec.id);
    } catch (e) {
      problems.push(`sandbox ${rec.id}: ${(e as Error).message}`);
    }
  }
  // one runc exec per sandbox, all at once: every CLI command pays for this
  await Promise.all(records.map((rec) => reconcile(ctx, rec).catch((e: unknown) => {
    // runc failing is not runc saying "no such container": keep what the record says
    problems.push(`sandbox ${rec.id}: state kept as recorded, ${(e as Error).message}`);
  })));

  // a record that exists but cannot be read still owns its container
  const known = new Set([...records.map((r) => r.id), ...loadProblems.map((p) => p.id)]);
  const orphanContainers: string[] = [];
  for (const id of await ctx.runtime.list().catch(() => [] as string[])) {
    if (known.has(id)) continue;
    try {
      await ctx.runtime.stop(id);
      await ctx.runtime.delete(id);
      orphanContainers.push(id);
    } catch (e) {
      problems.push(`orphan runc container ${id}: ${(e as Error).message}`);
    }
  }
  return { loaded: records.length, problems, orphanContainers };
}

async function reconcile(ctx: EngineContext, rec: SandboxRecord): Promise<void> {
  const pause: PauseState | undefined = await ctx.runtime.state(rec.id);
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
    await ctx.store.save(rec);
    ctx.emit({ type: 'sandbox.changed', id: rec.id, summary: toSummary(rec) });
  }
}
