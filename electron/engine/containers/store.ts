/**
 * The container store: an in-memory map backed by one versioned JSON file per container
 * (`<stateDir>/containers-store/<id>.json`), written atomically and durably (os/durable-write: temp file, fsync,
 * rename, fsync of the directory), rebuilt at start-up.
 * Lookups take a full id or a unique prefix; a miss is a typed NotFound, a second record with one id AlreadyExists.
 */
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import { writeFileDurable } from '../os/durable-write';
import type { ContainerStatusView } from '../../../shared/domain/container';
import { upgradeContainerRecord, type ContainerRecord } from './record';

export function containerNotFound(id: string): PodscopeError {
  return new PodscopeError('NotFound', `an error occurred when try to find container ${JSON.stringify(id)}: not found`);
}

export class ContainerStore {
  private readonly records = new Map<string, ContainerRecord>();
  private readonly deleted = new Set<string>();
  /**
   * Each record's status view as of its last save (status.ts): a poller asking for one container every second gets
   * the same object until the container changes, and the CRI server's wire caches key on it. Every change of a
   * record is saved (that is what makes it durable), so a save is where the view goes stale.
   */
  private readonly statusViews = new Map<string, { rec: ContainerRecord; view: ContainerStatusView }>();
  private readonly dir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, 'containers-store');
  }

  /** readOnly: create nothing and delete no interrupted writes; a missing dir is an empty store */
  async load(opts: { readOnly?: boolean } = {}): Promise<string[]> {
    if (!opts.readOnly) await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const problems: string[] = [];
    const names = await readdir(this.dir).catch((e: NodeJS.ErrnoException) => {
      if (opts.readOnly && e.code === 'ENOENT') return [] as string[];
      throw e;
    });
    for (const name of names.sort()) {
      const file = join(this.dir, name);
      if (name.endsWith('.tmp')) {
        if (!opts.readOnly) await rm(file, { force: true });
        continue;
      }
      if (!name.endsWith('.json')) continue;
      try {
        const rec = upgradeContainerRecord(JSON.parse(await readFile(file, 'utf8')));
        if (`${rec.id}.json` !== name) throw new Error(`record id ${rec.id} does not match its file name`);
        this.records.set(rec.id, rec);
      } catch (e) {
        problems.push(`cannot load ${file}: ${(e as Error).message}`);
      }
    }
    return problems;
  }

  /** Full id or unique prefix; undefined when nothing matches; InvalidArgument when ambiguous or empty. */
  resolve(idOrPrefix: string): ContainerRecord | undefined {
    if (idOrPrefix === '') throw new PodscopeError('InvalidArgument', 'container id must not be empty');
    const exact = this.records.get(idOrPrefix);
    if (exact) return exact;
    const matches = [...this.records.values()].filter((r) => r.id.startsWith(idOrPrefix));
    if (matches.length > 1)
      throw new PodscopeError(
        'InvalidArgument',
        `ambiguous container id prefix ${JSON.stringify(idOrPrefix)}: it matches ${matches.length} containers`,
      );
    return matches[0];
  }

  /** resolve, or NotFound */
  get(idOrPrefix: string): ContainerRecord {
    const rec = this.resolve(idOrPrefix);
    if (!rec) throw containerNotFound(idOrPrefix);
    return rec;
  }

  all(): ContainerRecord[] {
    return [...this.records.values()];
  }

  ofSandbox(sandboxId: string): ContainerRecord[] {
    return this.all().filter((r) => r.sandboxId === sandboxId);
  }

  async add(rec: ContainerRecord): Promise<void> {
    if (this.records.has(rec.id)) throw new PodscopeError('AlreadyExists', `container ${rec.id} already exists`);
    await this.save(rec);
  }

  /** the record's status view, built once per save (see statusViews) */
  statusView(rec: ContainerRecord, build: (rec: ContainerRecord) => ContainerStatusView): ContainerStatusView {
    const cached = this.statusViews.get(rec.id);
    if (cached && cached.rec === rec) return cached.view;
    const view = build(rec);
    if (this.records.get(rec.id) === rec) this.statusViews.set(rec.id, { rec, view });
    return view;
  }

  async save(rec: ContainerRecord): Promise<void> {
    if (this.deleted.has(rec.id)) return;
    this.statusViews.delete(rec.id);
    this.records.set(rec.id, rec);
    const file = join(this.dir, `${rec.id}.json`);
    // each save renames its own temp file (named `<id>.json.<pid>.<random>.tmp`: load() sweeps `.tmp` leftovers)
    await writeFileDurable(file, JSON.stringify(rec), { mode: 0o600 });
  }

  /**
   * Forgets the record and moves its file into `dir` (one rename, so a crash leaves it in one place or the other);
   * a record whose file is missing is written there.
   */
  async retire(rec: ContainerRecord, dir: string): Promise<void> {
    this.statusViews.delete(rec.id);
    this.records.delete(rec.id);
    this.deleted.add(rec.id);
    const to = join(dir, `${rec.id}.json`);
    try {
      await rename(join(this.dir, `${rec.id}.json`), to).catch(async (e: NodeJS.ErrnoException) => {
        if (e.code !== 'ENOENT') throw e;
        await writeFileDurable(to, JSON.stringify(rec), { mode: 0o600 });
      });
    } catch (e) {
      this.deleted.delete(rec.id);
      this.records.set(rec.id, rec);
      throw e;
    }
  }

  async delete(id: string): Promise<void> {
    this.statusViews.delete(id);
    this.records.delete(id);
    this.deleted.add(id);
    await rm(join(this.dir, `${id}.json`), { force: true });
  }
}
