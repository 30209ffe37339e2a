/**
 * Start-up: rebuild the container store, re-reserve names, notice containers that exited while no engine ran,
 * and delete runc containers under the containers root that no record owns.
 */
import { allRuntimes, type ContainerContext } from './context';
import { observeExit } from './exit';
import { finishInterruptedRemovals } from './remove';

export async function recoverContainers(ctx: ContainerContext, opts: { readOnly?: boolean } = {}): Promise<string[]> {
  const problems = await ctx.store.load(opts);
  for (const rec of ctx.store.all()) {
    try {
      ctx.names.reserve(rec.name, rec.id);
    } catch (e) {
      problems.push(`container ${rec.id}: ${(e as Error).message}`);
    }
  }
  // a read-only engine (CLI listings beside a daemon) looks and changes nothing: no record saves, no kills
  if (opts.readOnly) return problems;
  problems.push(...(await finishInterruptedRemovals(ctx)));
  await Promise.all(
    ctx.store
      .all()
      .map((rec) =>
        observeExit(ctx, rec, { exact: true }).catch((e: unknown) => problems.push(`container ${rec.id}: ${(e as Error).message}`)),
      ),
  );
  const known = new Set(ctx.store.all().map((r) => r.id));
  // each handler keeps its own root: an orphan is looked for, and deleted, by the runtime that made it
  for (const runtime of allRuntimes(ctx)) {
    for (const id of await runtime.list().catch(() => [] as string[])) {
      if (known.has(id)) continue;
      try {
        await runtime.kill(id, 'SIGKILL', true);
        await runtime.delete(id);
      } catch (e) {
        problems.push(`orphan ${runtime.handler ?? 'runc'} container ${id}: ${(e as Error).message}`);
      }
    }
  }
  return problems;
}
