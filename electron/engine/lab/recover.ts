/**
 * Start-up GC of runs an engine was killed in: for every in-flight record whose owner process is gone, CNI DEL
 * with the recorded conflist and capability args (so portmap, bandwidth and host-local release what ADD made, as
 * the run's own DEL would have), then the netns is removed and the run is kept as a record marked `recovered`.
 * Only namespaces named by this state dir's records are touched: a podscope-lab-* namespace without one belongs
 * to another engine (the record is always written before the namespace is created).
 */
import path from 'node:path';
import type { LabPluginTrace, LabRun } from '../../../shared/domain/lab';
import { delNetworkList } from '../cni/network-ops';
import { ResultCache } from '../cni/result-cache';
import type { NetnsManager } from '../netns/types';
import { labAttachment, labExecContext, labNetwork, type LabExecDeps } from './cni-calls';
import { isInflightOwnerAlive, type InflightRecord } from './inflight';
import type { LabRecords } from './record';

/** what start-up did about one interrupted run */
export interface LabRecoveryItem {
  runId: string;
  netns: string;
  /** what was done, in one line */
  action: string;
  /** set when a step failed (what failed stays on the host) */
  error?: string;
}

export interface LabRecoverDeps extends LabExecDeps {
  netns: NetnsManager;
}

/** what one recovery did, step by step */
interface Steps {
  actions: string[];
  errors: string[];
  traces: LabPluginTrace[];
}

export async function recoverInterrupted(deps: LabRecoverDeps, records: LabRecords): Promise<LabRecoveryItem[]> {
  const items: LabRecoveryItem[] = [];
  for (const { file, rec } of await records.inflight()) {
    if (await isInflightOwnerAlive(rec.owner)) continue;
    items.push(await recoverOne(deps, records, rec, file));
  }
  return items;
}

async function recoverOne(deps: LabRecoverDeps, records: LabRecords, rec: InflightRecord, file: string): Promise<LabRecoveryItem> {
  const steps: Steps = { actions: [], errors: [], traces: [] };
  // a record saved by an earlier recovery whose DEL failed does not count as a finished run: DEL is tried again
  const saved = await records.get(rec.id).then(
    (r) => (r.recovered ? undefined : r),
    () => undefined,
  );
  const netnsThere = !(await deps.netns.isClosed(rec.netns).catch(() => false));
  if (!saved) await delRecorded(deps, records, rec, steps);
  else steps.actions.push('the run had finished (its record was saved); only the in-flight marker was left');
  if (netnsThere) {
    try {
      await deps.netns.remove(rec.netns);
      steps.actions.push(`netns ${path.basename(rec.netns)} unmounted and deleted`);
    } catch (e) {
      steps.errors.push(`netns remove: ${(e as Error).message}`);
    }
  }
  if (!saved) await records.save(recoveredRun(rec, steps)).catch((e: unknown) => steps.errors.push(`record save: ${(e as Error).message}`));
  // with a failed step the marker stays, so the next start-up tries again
  if (steps.errors.length === 0) await records.removeInflight(file);
  return {
    runId: rec.id,
    netns: rec.netns,
    action: steps.actions.join('; ') || 'nothing to do',
    ...(steps.errors.length ? { error: steps.errors.join('; ') } : {}),
  };
}

/** DEL of every plugin: which ones ADD reached is unknown, and DEL of what was never added is a no-op */
async function delRecorded(deps: LabRecoverDeps, records: LabRecords, rec: InflightRecord, steps: Steps): Promise<void> {
  let net: ReturnType<typeof labNetwork>;
  try {
    net = labNetwork(rec.text, rec.ifName);
  } catch (e) {
    steps.errors.push(`recorded conflist unreadable: ${(e as Error).message}`);
    return;
  }
  const ctx = labExecContext(
    deps,
    () => 'DEL',
    (trace) => steps.traces.push(trace),
  );
  try {
    await delNetworkList(ctx, new ResultCache(records.cacheDir), net, labAttachment(rec, rec.capabilities));
    steps.actions.push(`CNI DEL with the recorded conflist (${steps.traces.length} plugin execs): ok`);
  } catch (e) {
    steps.errors.push(`CNI DEL: ${(e as Error).message}`);
  }
}

function field(text: string, key: 'name' | 'cniVersion'): string {
  try {
    const v = (JSON.parse(text) as Record<string, unknown>)[key];
    return typeof v === 'string' ? v : '';
  } catch {
    return '';
  }
}

function recoveredRun(rec: InflightRecord, { actions, errors, traces }: Steps): LabRun {
  return {
    id: rec.id,
    createdAt: rec.createdAt,
    text: rec.text,
    name: field(rec.text, 'name'),
    cniVersion: field(rec.text, 'cniVersion'),
    capabilities: rec.capabilities,
    containerId: rec.containerId,
    netns: rec.netns,
    ifName: rec.ifName,
    plugins: traces,
    versions: [],
    addOk: false,
    delOk: errors.length === 0,
    error: { code: 'Canceled', message: `interrupted: the engine (pid ${rec.owner.pid}) ended mid-run; a later start-up tore it down` },
    kernelCreated: [],
    leftAfterDel: [],
    keptByDesign: [],
    forced: [],
    tokens: {},
    snapshotErrors: errors,
    durationMs: 0,
    recovered: {
      at: new Date().toISOString(),
      actions: [...actions, ...errors.map((e) => `FAILED ${e}`)],
      interruptedPid: rec.owner.pid,
    },
    success: false,
  };
}
