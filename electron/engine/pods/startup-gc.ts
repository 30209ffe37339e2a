/**
 * Start-up garbage collection of what a killed engine can leave behind with no record pointing at it: libcni cache
 * temp files, network namespaces of ours that no record names. (Half-written records are dropped by the store's load,
 * runc containers of ours with no record by recover.ts.) Each item is returned so the Engine page can show it.
 */
import { readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { serializeError } from '../../../shared/domain/errors';
import type { StartupGcItem, StartupGcKind } from '../../../shared/domain/sandbox';
import { isCacheTempName } from '../cni/result-cache';
import type { PodsContext } from './context';
import { isOwnedNetnsPath, netnsTag } from './ownership';

export function gcItem(kind: StartupGcKind, target: { path?: string; id?: string }, action: string, error?: unknown): StartupGcItem {
  return {
    kind,
    ...target,
    action,
    ...(error !== undefined ? { error: serializeError(error).message } : {}),
    at: new Date().toISOString(),
  };
}

/**
 * Namespaces in our netns dir whose name carries our owner tag and that no record (readable or not) names. The
 * record is written before the namespace is created and deleted only after it is gone, so such a namespace can only
 * come from a record lost to something outside the engine; it pins nothing anyone can reach any more.
 */
export async function collectOrphanNetns(ctx: PodsContext, referenced: string[], unreadableRecords: string[]): Promise<StartupGcItem[]> {
  const id = ctx.owner.stateDirId;
  if (!id) return [];
  const tag = netnsTag(id);
  const names = new Set(referenced.map((p) => basename(p)));
  const items: StartupGcItem[] = [];
  let pinned: string[];
  try {
    pinned = await ctx.netns.list();
  } catch (e) {
    return [gcItem('netns', { path: ctx.netns.dir }, 'list namespaces', e)];
  }
  for (const path of pinned) {
    const name = basename(path);
    if (!isOwnedNetnsPath(path, tag) || names.has(name) || unreadableRecords.some((text) => text.includes(name))) continue;
    try {
      await ctx.netns.remove(path);
      items.push(gcItem('netns', { path }, 'unmounted and deleted (ours, no record)'));
    } catch (e) {
      items.push(gcItem('netns', { path }, 'unmount and delete', e));
    }
  }
  return items;
}

/**
 * libcni cache temp files (`<network>-<containerId>-<ifName>.tmp-<pid>-<rand>`) of our sandboxes: a cache write
 * happens during a run, while the sandbox's record exists, so a temp whose container id is one of our records is
 * ours and was left by a writer that died before its rename. The state-dir lock guarantees no live writer of ours.
 * Temps of other runtimes sharing the cache dir (other container ids) are never touched.
 */
export async function collectCacheTemps(cacheDir: string, ourIds: Set<string>): Promise<StartupGcItem[]> {
  const dir = join(cacheDir, 'results');
  const names = await readdir(dir).catch(() => [] as string[]);
  const items: StartupGcItem[] = [];
  for (const name of names) {
    if (!isCacheTempName(name)) continue;
    const owner = [...ourIds].find((id) => name.includes(`-${id}-`));
    if (!owner) continue;
    const path = join(dir, name);
    try {
      await rm(path, { force: true });
      items.push(gcItem('cni-cache-temp', { path }, 'deleted (a cache write interrupted before its rename)'));
    } catch (e) {
      items.push(gcItem('cni-cache-temp', { path }, 'delete', e));
    }
  }
  return items;
}
