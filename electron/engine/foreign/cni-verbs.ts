/**
 * CNI CHECK and STATUS for another runtime's pod, the way its own libcni would run them and nothing more: each
 * attachment's conflist is the one in its cache entry (what the ADD ran), CNI_ARGS and the capability args are the
 * cached ones, prevResult is the cached result, read here and handed over — an unreadable entry is reported, never
 * removed (cni/network-ops.ts CheckPrevResult). No ADD, no DEL: CHECK and STATUS change nothing by the spec.
 */
import { PodscopeError } from '../../../shared/domain/errors';
import type { CniCheckReport, CniStatusReport } from '../../../shared/domain/measure';
import { checkOutcome, statusOutcome } from '../cni/cni-manager';
import type { LoadedNetwork } from '../cni/conf-dir';
import { confListFromBytes } from '../cni/conf-list';
import type { ExecContext } from '../cni/plugin-exec';
import { checkReportNetworks, cniCallEntries, statusReportNetworks } from '../cni/reports';
import type { CniCallRecord, CniVerbOutcome } from '../cni/types';
import { readyPod, type PodLookup } from '../common/pod-facts';
import type { NodeFiles } from './deps';
import type { ForeignPodFacts } from './resolve';

/** the cached conflist and result of one attachment, read from its cache file */
async function cachedList(
  files: NodeFiles,
  cacheFile: string,
): Promise<{ net: Omit<LoadedNetwork, 'ifName'>; result?: Record<string, unknown> }> {
  const text = await files.readText(cacheFile);
  if (text === undefined) throw new PodscopeError('FailedPrecondition', `libcni's cache entry ${cacheFile} cannot be read`);
  const doc = JSON.parse(text) as { config?: string; result?: Record<string, unknown> };
  const list = confListFromBytes(Buffer.from(doc.config ?? '', 'base64'));
  return { net: { list, source: cacheFile, builtin: false, binaries: [] }, ...(doc.result && { result: doc.result }) };
}

/** CHECK of every attachment of the pod (its loopback too, which a 0.3.x list reports as not supported). */
export async function foreignCniCheck(
  files: NodeFiles,
  pods: PodLookup<ForeignPodFacts>,
  idOrPrefix: string,
  exec: (record: (r: CniCallRecord) => void) => ExecContext,
): Promise<CniCheckReport> {
  const pod = readyPod(pods, idOrPrefix, 'check');
  const measuredAt = new Date().toISOString();
  const { entries, record } = cniCallEntries();
  const ctx = exec(record);
  const outcomes: CniVerbOutcome[] = [];
  for (const a of pod.network?.networks ?? []) {
    const base = { network: a.network, ifName: a.ifName, cniVersion: a.cniVersion };
    if (!a.cacheFile) {
      outcomes.push({ ...base, outcome: 'failed', message: 'no cache entry: nothing says what the ADD ran with' });
      continue;
    }
    let cached: Awaited<ReturnType<typeof cachedList>>;
    try {
      cached = await cachedList(files, a.cacheFile);
    } catch (e) {
      outcomes.push({ ...base, outcome: 'failed', message: (e as Error).message, error: e });
      continue;
    }
    const net: LoadedNetwork = { ...cached.net, ifName: a.ifName };
    outcomes.push(
      await checkOutcome(ctx, { given: cached.result }, net, {
        containerId: pod.id,
        netns: pod.netnsPath,
        opts: { args: a.cniArgs, capabilities: a.capabilityArgs },
      }),
    );
  }
  const networks = checkReportNetworks(outcomes, entries);
  return { id: pod.id, measuredAt, ok: networks.every((n) => n.outcome !== 'failed'), networks };
}

/** STATUS of every network the endpoint's ready pods were attached with (their cached conflists, once each). */
export async function foreignCniStatus(
  files: NodeFiles,
  pods: PodLookup<ForeignPodFacts>,
  exec: (record: (r: CniCallRecord) => void) => ExecContext,
): Promise<CniStatusReport> {
  const measuredAt = new Date().toISOString();
  const { entries, record } = cniCallEntries();
  const ctx = exec(record);
  const seen = new Map<string, LoadedNetwork>();
  for (const pod of pods.all())
    for (const a of pod.network?.networks ?? []) {
      if (!a.cacheFile || seen.has(a.network)) continue;
      const cached = await cachedList(files, a.cacheFile).catch(() => undefined);
      if (cached) seen.set(a.network, { ...cached.net, ifName: a.ifName });
    }
  const outcomes: CniVerbOutcome[] = [];
  for (const net of seen.values()) outcomes.push(await statusOutcome(ctx, net));
  const networks = statusReportNetworks(outcomes, entries);
  return { measuredAt, ok: networks.every((n) => n.outcome !== 'failed'), networks };
}
