/**
 * The CNI lab's door (LabApi): validate a conflist TEXT (validate.ts), run it in a throwaway netns (run.ts, through
 * the CNI module the sandbox runtime uses), keep and read runs (record.ts), recover runs a crash interrupted
 * (recover.ts), diff two runs or a run and a live pod's ADD (diff.ts), and save a conflist into the conf dir
 * (save.ts). Runs go one at a time: two overlapping runs would see each other's rules in their snapshots.
 */
import path from 'node:path';
import {
  LabRunRequestSchema,
  type LabApi,
  type LabDiff,
  type LabRecordedAdd,
  type LabProgress,
  type LabRun,
  type LabRunRequest,
  type LabRunSummary,
  type LabSaveRequest,
  type LabSaveResult,
  type LabValidation,
} from '../../../shared/domain/lab';
import type { LabOptions } from './cni-calls';
import { diffSides, runSide, sandboxSide, type DiffSide, type RecordedAdd } from './diff';
import { LabRecords } from './record';
import { recoverInterrupted, type LabRecoveryItem } from './recover';
import { invalidConflist, sharesLiveNetworking } from './refusal';
import { runConflist, type LabRunDeps } from './run';
import { saveConflist } from './save';
import { validateConflistText, type LiveNetworkUse } from './validate';

export type { LabOptions } from './cni-calls';
export type { RecordedAdd } from './diff';
export type { LabRecoveryItem } from './recover';

export interface LabDeps extends LabRunDeps {
  options: LabOptions;
  /** live sandboxes' networks, for the "this run would touch a pod" check */
  liveNetworks(): Promise<LiveNetworkUse[]>;
  /** a sandbox's recorded ADD (NotFound when there is no such sandbox) */
  recordedAdd(id: string): Promise<RecordedAdd>;
}

export class LabService implements LabApi {
  private readonly listeners = new Set<(p: LabProgress) => void>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly records: LabRecords;

  constructor(private readonly deps: LabDeps) {
    this.records = new LabRecords(path.join(deps.options.stateDir, 'lab'));
  }

  get dir(): string {
    return this.records.dir;
  }

  subscribe(listener: (p: LabProgress) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(p: LabProgress, extra?: (p: LabProgress) => void): void {
    for (const l of [...this.listeners, ...(extra ? [extra] : [])]) {
      try {
        l(p);
      } catch {
        // a broken listener must not break the run
      }
    }
  }

  async validate(text: string): Promise<LabValidation> {
    const v = await validateConflistText(text, this.deps.options.cniBinDirs, await this.deps.liveNetworks().catch(() => []));
    delete v.parsed;
    return v;
  }

  run(req: LabRunRequest, onProgress?: (p: LabProgress) => void): Promise<LabRun> {
    const next = this.queue.catch(() => undefined).then(() => this.runNow(req, onProgress));
    this.queue = next;
    return next;
  }

  private async runNow(raw: LabRunRequest, onProgress?: (p: LabProgress) => void): Promise<LabRun> {
    const req = LabRunRequestSchema.parse(raw);
    const validation = await validateConflistText(req.text, this.deps.options.cniBinDirs, await this.deps.liveNetworks());
    if (!validation.ok || !validation.parsed) throw invalidConflist(validation, 'nothing was run');
    if (validation.conflicts.length > 0 && !req.force) throw sharesLiveNetworking(validation);
    const accepted = { parsed: validation.parsed, conflicts: validation.conflicts };
    return runConflist(this.deps, this.records, req, accepted, (p) => this.emit(p, onProgress));
  }

  /** See recover.ts: DEL, netns removal and a `recovered` record for each run whose engine died mid-run. */
  recoverInterrupted(): Promise<LabRecoveryItem[]> {
    return recoverInterrupted(this.deps, this.records);
  }

  list(): Promise<LabRunSummary[]> {
    return this.records.list();
  }

  get(id: string): Promise<LabRun> {
    return this.records.get(id);
  }

  async diff(a: string, b: string): Promise<LabDiff> {
    const side = async (ref: string): Promise<DiffSide> =>
      ref.startsWith('sandbox:')
        ? sandboxSide(await this.deps.recordedAdd(ref.slice('sandbox:'.length)))
        : runSide(await this.records.get(ref));
    return diffSides(await side(a), await side(b));
  }

  /** run `a` against another runtime's pod's ADD, as libcni's cache keeps it (foreign/recorded-add.ts) */
  async diffWithAdd(a: string, b: LabRecordedAdd): Promise<LabDiff> {
    return diffSides(runSide(await this.records.get(a)), sandboxSide(b));
  }

  /** Durable write into the conf dir, the previous file kept as <file>.bak-<time> (save.ts). */
  save(req: LabSaveRequest): Promise<LabSaveResult> {
    return saveConflist(this.deps.options.cniConfDir, this.deps.options.cniBinDirs, req);
  }
}
