/**
 * What the lab keeps on disk under <stateDir>/lab: every finished run as <runId>.json, and while a run is in
 * progress its in-flight record under inflight/ (written before the netns exists, removed after the run's record is
 * saved), which is what a later start-up tears an interrupted run down from. Both are written durably, so a crash
 * at any moment leaves a whole record or none.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { PodscopeError } from '../../../shared/domain/errors';
import type { LabRun, LabRunSummary } from '../../../shared/domain/lab';
import { writeFileDurable } from '../os/durable-write';
import type { InflightRecord } from './inflight';

const RUN_FILE = /^[A-Za-z0-9][A-Za-z0-9_.-]*\.json$/;
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** records are read by the CLI and the app alike, as they were before writes became durable */
const RECORD_MODE = 0o644;
const DIR_MODE = 0o755;

export function summarize(run: LabRun): LabRunSummary {
  return {
    id: run.id,
    createdAt: run.createdAt,
    name: run.name,
    cniVersion: run.cniVersion,
    pluginTypes: [...new Set(run.plugins.filter((p) => p.phase === 'ADD').map((p) => p.type))],
    success: run.success,
    addOk: run.addOk,
    leaked: run.leftAfterDel.length,
    durationMs: run.durationMs,
  };
}

/** the .json names in a directory that may not exist yet */
async function recordNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => RUN_FILE.test(n));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

export class LabRecords {
  constructor(readonly dir: string) {}

  /** the lab's own libcni cache (never the engine's) */
  get cacheDir(): string {
    return path.join(this.dir, 'cni-cache');
  }

  get inflightDir(): string {
    return path.join(this.dir, 'inflight');
  }

  async save(run: LabRun): Promise<void> {
    await writeFileDurable(path.join(this.dir, `${run.id}.json`), JSON.stringify(run, null, 2), {
      mode: RECORD_MODE,
      mkdirMode: DIR_MODE,
    });
  }

  async list(): Promise<LabRunSummary[]> {
    const out: LabRunSummary[] = [];
    for (const n of await recordNames(this.dir)) {
      try {
        out.push(summarize(JSON.parse(await readFile(path.join(this.dir, n), 'utf8')) as LabRun));
      } catch {
        // a damaged record is skipped, not fatal to the list
      }
    }
    return out.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  async get(id: string): Promise<LabRun> {
    if (!RUN_ID.test(id)) throw new PodscopeError('InvalidArgument', `not a lab run id: ${JSON.stringify(id)}`);
    const text = await readFile(path.join(this.dir, `${id}.json`), 'utf8').catch(async () => {
      // a unique prefix works, as sandbox ids do
      const matches = (await this.list()).filter((r) => r.id.startsWith(id));
      if (matches.length === 1) return readFile(path.join(this.dir, `${matches[0]!.id}.json`), 'utf8');
      throw new PodscopeError(
        'NotFound',
        matches.length > 1 ? `lab run prefix ${id} is ambiguous (${matches.length} runs)` : `no lab run ${id}`,
      );
    });
    return JSON.parse(text) as LabRun;
  }

  /** the crash record of a run about to start; returns its file */
  async writeInflight(rec: InflightRecord): Promise<string> {
    const file = path.join(this.inflightDir, `${rec.id}.json`);
    await writeFileDurable(file, JSON.stringify(rec), { mode: RECORD_MODE, mkdirMode: DIR_MODE });
    return file;
  }

  async removeInflight(file: string): Promise<void> {
    await rm(file, { force: true });
  }

  /** every readable in-flight record; a half-written one (its rename never happened) has a .tmp name and is not listed */
  async inflight(): Promise<Array<{ file: string; rec: InflightRecord }>> {
    const out: Array<{ file: string; rec: InflightRecord }> = [];
    for (const n of await recordNames(this.inflightDir)) {
      const file = path.join(this.inflightDir, n);
      try {
        out.push({ file, rec: JSON.parse(await readFile(file, 'utf8')) as InflightRecord });
      } catch {
        continue;
      }
    }
    return out;
  }
}
