/** PodSandboxStatus and ListPodSandbox (docs/semantics.md#status-and-list): cheap reads of the store plus a liveness check of the pause pid. */
import { readFileSync } from 'node:fs';
import type { SandboxFilter, SandboxStatus, SandboxSummary } from '../../../shared/domain/sandbox';
import type { EngineContext } from './context';
import { resolveIdPrefix } from './id-index';
import type { SandboxRecord } from './record';
import { notFoundError } from './store';
import { toStatus, toSummary } from './view';

export async function sandboxStatus(ctx: EngineContext, idOrPrefix: string): Promise<SandboxStatus> {
  const id = resolveIdPrefix(ctx.store.ids(), idOrPrefix);
  const rec = id === undefined ? undefined : ctx.store.get(id);
  if (!rec) throw notFoundError(idOrPrefix);
  await refreshLiveness(ctx, rec);
  return toStatus(rec, rec.netnsPath === undefined || rec.netnsClosed === true);
}

export async function listSandboxes(ctx: EngineContext, filter: SandboxFilter = {}): Promise<SandboxSummary[]> {
  const records = ctx.store.all();
  await Promise.all(records.map((r) => refreshLiveness(ctx, r)));
  const nameRe = filter.name ? safeRegExp(filter.name) : undefined;
  const nsRe = filter.namespace ? safeRegExp(filter.namespace) : undefined;
  return records
    .map(toSummary)
    // An id filter matches by prefix (a unique prefix is what crictl passes; a shared one lists every match).
    .filter((s) => !filter.id || s.id.startsWith(filter.id))
    .filter((s) => !filter.state || s.state === filter.state)
    .filter((s) => Object.entries(filter.labelSelector ?? {}).every(([k, v]) => s.labels[k] === v))
    .filter((s) => !nameRe || nameRe.test(s.metadata.name))
    .filter((s) => !nsRe || nsRe.test(s.metadata.namespace))
    .sort((a, b) => (a.createdAtNs === b.createdAtNs ? a.id.localeCompare(b.id) : BigInt(b.createdAtNs) > BigInt(a.createdAtNs) ? 1 : -1));
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
export async function refreshLiveness(ctx: EngineContext, rec: SandboxRecord): Promise<void> {
  if (rec.state !== 'Ready' || rec.pause.pid === undefined) return;
  // Under the sandbox's lock, and skipped while a verb holds it: a verb in flight owns the record, and a save that
  // raced a stop or remove could otherwise write an older state over it.
  await ctx.locks.tryRun(rec.id, async () => {
    if (ctx.store.get(rec.id) !== rec || rec.state !== 'Ready' || rec.pause.pid === undefined) return;
    if (await ctx.processAlive(rec.pause.pid, rec.pause.startTicks)) return;
    rec.state = 'NotReady';
    rec.pause = { ...rec.pause, status: 'stopped' };
    await ctx.store.save(rec);
    ctx.emit({ type: 'sandbox.changed', id: rec.id, summary: toSummary(rec) });
  });
}

/** Fields of /proc/<pid>/stat after the parenthesised command name (which may itself contain spaces). */
async function procStat(pid: number): Promise<string[] | undefined> {
  try {
    // procfs is generated in memory: a synchronous read costs microseconds, where an async one is a thread-pool
    // round trip that status and list would pay for every sandbox
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The process start time in clock ticks (stat field 22): with the pid, it names one process across pid reuse. */
export async function processStartTicks(pid: number): Promise<number | undefined> {
  const f = await procStat(pid).catch(() => undefined);
  return f ? Number(f[19]) : undefined;
}

/**
 * Dead when /proc has no such pid, shows a zombie (runc reports "stopped" while init has yet to reap it), or the
 * pid now belongs to a process started at another time. Any other read error says nothing, so it counts as alive.
 */
export async function isProcessAlive(pid: number, startTicks?: number): Promise<boolean> {
  let fields: string[] | undefined;
  try {
    fields = await procStat(pid);
  } catch {
    return true;
  }
  if (!fields || fields[0] === 'Z') return false;
  return startTicks === undefined || Number(fields[19]) === startTicks;
}
