/**
 * libcni's on-disk result cache (`cniCacheV1`): `<cacheDir>/results/<network>-<containerId>-<ifName>`, dir 0700,
 * file 0600. The final ADD result is written after a whole list succeeded; DEL reads it back as prevResult. After a
 * failed ADD the last successful plugin's result is written instead, marked `incompleteAdd` (libcni writes nothing
 * then; docs/semantics.md#del-after-failed-add).
 * Writes go through os/durable-write (temp file, fsync, rename, fsync of the directory) so a crash never leaves half
 * a cache file, and the result a later DEL needs survives a power loss.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeFileDurable } from '../os/durable-write';

export const CACHE_KIND = 'cniCacheV1';

export interface CacheEntry {
  containerId: string;
  /** the conflist bytes (stored base64, as Go encodes []byte) */
  config: Buffer;
  ifName: string;
  networkName: string;
  netns: string;
  cniArgs: Array<[string, string]>;
  capabilityArgs: Record<string, unknown>;
  /** the final ADD result as JSON */
  result: Record<string, unknown>;
  /**
   * Podscope's own key (libcni has no such entry and ignores unknown keys): set when the ADD failed and `result` is
   * the last successful plugin's result, kept so the DEL that must follow can hand it to the plugins as prevResult.
   */
  incompleteAdd?: IncompleteAdd;
}

/** Which plugin of the list failed and which one printed the result that was cached instead. */
export interface IncompleteAdd {
  failedIndex: number;
  failedType: string;
  resultIndex: number;
  resultType: string;
}

export type CachedResult =
  | { state: 'missing' }
  /** the raw result JSON (legacy files hold just a bare result) */
  | { state: 'found'; result: unknown; incompleteAdd?: IncompleteAdd }
  | { state: 'unreadable'; reason: string };

export interface AttachmentKey {
  networkName: string;
  containerId: string;
  ifName: string;
}

const TEMP_SUFFIX = /\.tmp-\d+-[0-9a-f]+$/;

/** a temp file of a cache write (`<entry>.tmp-<pid>-<rand>`): it exists only between the write and the rename */
export function isCacheTempName(name: string): boolean {
  return TEMP_SUFFIX.test(name);
}

function isIncompleteAdd(x: unknown): x is IncompleteAdd {
  if (typeof x !== 'object' || x === null) return false;
  const o = x as Record<string, unknown>;
  return (
    typeof o.failedIndex === 'number' &&
    typeof o.resultIndex === 'number' &&
    typeof o.failedType === 'string' &&
    typeof o.resultType === 'string'
  );
}

export class ResultCache {
  readonly dir: string;

  constructor(cacheDir: string) {
    this.dir = path.join(cacheDir, 'results');
  }

  filePath(k: AttachmentKey): string {
    return path.join(this.dir, `${k.networkName}-${k.containerId}-${k.ifName}`);
  }

  async write(e: CacheEntry): Promise<string> {
    // field order and omit-if-empty rules follow libcni's cachedInfo struct
    const doc: Record<string, unknown> = {
      kind: CACHE_KIND,
      containerId: e.containerId,
      config: e.config.toString('base64'),
      ifName: e.ifName,
      networkName: e.networkName,
    };
    if (e.netns) doc.netns = e.netns;
    if (e.cniArgs.length) doc.cniArgs = e.cniArgs;
    if (Object.keys(e.capabilityArgs).length) doc.capabilityArgs = e.capabilityArgs;
    doc.result = e.result;
    if (e.incompleteAdd) doc.incompleteAdd = e.incompleteAdd;
    const file = this.filePath(e);
    // the temp keeps the cache's own name (`<entry>.tmp-<pid>-<rand>`): attachments() skips it and the start-up
    // sweep knows it as ours
    await writeFileDurable(file, JSON.stringify(doc), {
      mode: 0o600,
      mkdirMode: 0o700,
      tempPath: `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`,
    });
    return file;
  }

  async readResult(k: AttachmentKey): Promise<CachedResult> {
    let text: string;
    try {
      text = await readFile(this.filePath(k), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
      return { state: 'unreadable', reason: (e as Error).message };
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      return { state: 'unreadable', reason: `not JSON: ${(e as Error).message}` };
    }
    const isV1 = typeof doc === 'object' && doc !== null && (doc as Record<string, unknown>).kind === CACHE_KIND;
    if (!isV1) return { state: 'found', result: doc };
    const { result, incompleteAdd } = doc as { result: unknown; incompleteAdd?: unknown };
    return { state: 'found', result, ...(isIncompleteAdd(incompleteAdd) ? { incompleteAdd } : {}) };
  }

  /** Deletes the entry and any temp a crashed write of it left (so a later remove never strands one). */
  async remove(k: AttachmentKey): Promise<void> {
    await rm(this.filePath(k), { force: true });
    const prefix = `${path.basename(this.filePath(k))}.tmp-`;
    const names = await readdir(this.dir).catch(() => [] as string[]);
    await Promise.all(
      names.filter((n) => n.startsWith(prefix) && isCacheTempName(n)).map((n) => rm(path.join(this.dir, n), { force: true })),
    );
  }

  /** libcni GetCachedAttachments: names containing `-<id>-` whose content names the same container. */
  async attachments(containerId: string): Promise<string[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).sort();
    } catch {
      return [];
    }
    const out: string[] = [];
    for (const name of names.filter((n) => n.includes(`-${containerId}-`) && !n.includes('.tmp-'))) {
      const file = path.join(this.dir, name);
      try {
        const doc = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
        if (doc.kind === CACHE_KIND && doc.containerId === containerId) out.push(file);
      } catch {
        // unreadable entries are skipped, as libcni does
      }
    }
    return out;
  }
}
