/**
 * The sandbox store: an in-memory map backed by one versioned JSON file per sandbox (`<stateDir>/store/<id>.json`),
 * written atomically and durably (os/durable-write: temp file, fsync, rename, fsync of the directory) so a crash
 * never leaves a half-written record. Rebuilt at start-up.
 * Sandbox files (hostname, resolv.conf…) live apart, in `<stateDir>/sandboxes/<id>`, so deleting them never
 * deletes the record that says they existed.
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { writeFileDurable } from '../os/durable-write';
import { SandboxReadIndex } from './read-index';
import { upgradeSandboxRecord, type SandboxRecord } from './record';
import { podNotFound, type PodLookup } from '../common/pod-facts';

export interface StoreLoadProblem {
  file: string;
  /** the sandbox id the file name claims, so recovery never treats that sandbox's resources as orphans */
  id: string;
  message: string;
  /** the file's text when it could be read: start-up looks for names in it before calling anything an orphan */
  raw?: string;
}

export interface StoreOptions {
  /**
   * Read-only (CLI `pods`/`inspectp`): load() creates and deletes nothing, save() only updates memory (a derived
   * state such as NotReady is still shown), delete() refuses.
   */
  readOnly?: boolean;
}

export class SandboxStore {
  private readonly records = new Map<string, SandboxRecord>();
  /** the views and indexes status and list read, kept current by save and delete */
  readonly index = new SandboxReadIndex();
  private readonly dir: string;
  /** ids removed in this process: a late save (e.g. a liveness check that raced remove) must not bring them back */
  private readonly deleted = new Set<string>();

  private readonly readOnly: boolean;

  constructor(stateDir: string, options: StoreOptions = {}) {
    this.dir = join(stateDir, 'store');
    this.readOnly = options.readOnly ?? false;
  }

  /** @param onTempRemoved told about each half-written record (a save a crash interrupted before its rename) it deletes */
  async load(onTempRemoved?: (file: string) => void): Promise<StoreLoadProblem[]> {
    let names: string[];
    if (this.readOnly) {
      names = await readdir(this.dir).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? [] : Promise.reject(e)));
    } else {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      names = await readdir(this.dir);
    }
    const problems: StoreLoadProblem[] = [];
    for (const name of names.sort()) {
      if (name.endsWith('.tmp')) {
        if (this.readOnly) continue;
        await rm(join(this.dir, name), { force: true }); // a write that a crash interrupted before its rename
        onTempRemoved?.(join(this.dir, name));
        continue;
      }
      if (!name.endsWith('.json')) continue;
      const file = join(this.dir, name);
      let raw: string | undefined;
      try {
        raw = await readFile(file, 'utf8');
        const rec = upgradeSandboxRecord(JSON.parse(raw));
        if (`${rec.id}.json` !== name) throw new Error(`record id ${rec.id} does not match its file name`);
        this.records.set(rec.id, rec);
        this.index.upsert(rec);
      } catch (e) {
        problems.push({ file, id: name.slice(0, -'.json'.length), message: (e as Error).message, raw });
      }
    }
    return problems;
  }

  get(id: string): SandboxRecord | undefined {
    return this.records.get(id);
  }

  ids(): IterableIterator<string> {
    return this.records.keys();
  }

  all(): SandboxRecord[] {
    return [...this.records.values()];
  }

  /** this store as the pod lookup the other features are given (id or unique prefix; a typed NotFound) */
  readonly pods: PodLookup<SandboxRecord> = {
    resolve: (idOrPrefix) => this.index.resolve(idOrPrefix),
    find: (idOrPrefix) => {
      const id = this.index.resolve(idOrPrefix);
      return id === undefined ? undefined : this.records.get(id);
    },
    get: (idOrPrefix) => {
      const rec = this.pods.find(idOrPrefix);
      if (!rec) throw podNotFound(idOrPrefix);
      return rec;
    },
    all: () => this.all(),
  };

  async save(rec: SandboxRecord): Promise<void> {
    if (this.deleted.has(rec.id)) return;
    this.records.set(rec.id, rec);
    this.index.upsert(rec);
    if (this.readOnly) return;
    const file = join(this.dir, `${rec.id}.json`);
    // each save renames its own temp file (named `<id>.json.<pid>.<random>.tmp`: load() sweeps `.tmp` leftovers)
    await writeFileDurable(file, JSON.stringify(rec), { mode: 0o600 });
  }

  async delete(id: string): Promise<void> {
    if (this.readOnly) throw new PodscopeError('FailedPrecondition', `a read-only engine does not delete sandbox ${id}`);
    this.records.delete(id);
    this.index.delete(id);
    this.deleted.add(id);
    await rm(join(this.dir, `${id}.json`), { force: true });
  }
}

/** the pod NotFound (common/pod-facts.ts), under the name the pod verbs know */
export const notFoundError = podNotFound;
