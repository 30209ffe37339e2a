/**
 * The pod's network verdict at a glance, from the last probe report: green only when every path was measured while the
 * pod is ready and each one answered (isolated-by-design paths aside); a stopped pod, or one never probed, has no
 * verdict at all — a grey one that says why, never a green one from configuration.
 */
import type { ProbePath, ProbeReport } from '../../../../../../shared/domain/probe';
import type { SandboxSummary } from '../../../../../../shared/domain/sandbox';
import type { Tone } from '../../../../lib/ui/StatusPill';

export type VerdictKind = 'reachable' | 'failing' | 'shadowed' | 'notMeasured' | 'notReady' | 'hostNetwork';

export interface NetworkVerdict {
  kind: VerdictKind;
  tone: Tone;
  /** a few words for a pill or a list cell */
  label: string;
  /** the sentence behind it (tooltip, overview) */
  detail: string;
  /** RFC 3339: when the probe behind the verdict ran */
  measuredAt?: string;
  /** paths measured and not answered (refused, timed out, unreachable) or losing full-size packets (an MTU black hole), with their index into report.paths */
  failing: Array<{ path: ProbePath; index: number }>;
  shadowed: number;
  reachable: number;
  /** paths measured at all */
  measured: number;
}

const FAILED: ReadonlySet<ProbePath['verdict']> = new Set(['refused', 'timeout', 'unreachable']);

export function networkVerdict(pod: Pick<SandboxSummary, 'state' | 'hostNetwork'>, report: ProbeReport | null | undefined): NetworkVerdict {
  const none = { failing: [], shadowed: 0, reachable: 0, measured: 0 };
  if (pod.hostNetwork)
    return {
      kind: 'hostNetwork',
      tone: 'muted',
      label: 'host network',
      detail: 'The pod shares the host network: nothing to probe.',
      ...none,
    };
  if (pod.state !== 'SANDBOX_READY') {
    return {
      kind: 'notReady',
      tone: 'muted',
      label: 'no verdict: not ready',
      detail: report
        ? 'The pod is not ready: the last probe was measured before and says nothing about it now.'
        : 'The pod is not ready: there is nothing to measure.',
      measuredAt: report?.measuredAt,
      ...none,
    };
  }
  if (!report) return { kind: 'notMeasured', tone: 'muted', label: 'not measured', detail: 'No probe has run for this pod yet.', ...none };
  const failing: NetworkVerdict['failing'] = [];
  let shadowed = 0;
  let reachable = 0;
  let measured = 0;
  report.paths.forEach((path, index) => {
    if (!path.measured) return;
    measured++;
    // a path that connects but loses full-size packets (an MTU black hole) fails like one that does not answer
    if (FAILED.has(path.verdict) || path.mtu?.blackHole) failing.push({ path, index });
    else if (path.verdict === 'shadowed') shadowed++;
    else if (path.verdict === 'reachable') reachable++;
  });
  const base = { measuredAt: report.measuredAt, failing, shadowed, reachable, measured };
  if (failing.length > 0)
    return {
      kind: 'failing',
      tone: 'bad',
      label: `${failing.length} of ${measured} ${measured === 1 ? 'path' : 'paths'} failing`,
      detail: failing.every((f) => f.path.mtu?.blackHole && !FAILED.has(f.path.verdict))
        ? `Measured: ${failing.length} ${failing.length === 1 ? 'path loses' : 'paths lose'} full-size packets (an MTU black hole).`
        : `Measured: ${failing.length} ${failing.length === 1 ? 'path does' : 'paths do'} not answer or ${failing.length === 1 ? 'loses' : 'lose'} full-size packets.`,
      ...base,
    };
  if (shadowed > 0)
    return {
      kind: 'shadowed',
      tone: 'warn',
      label: `${shadowed} shadowed`,
      detail: `Measured: ${shadowed} ${shadowed === 1 ? 'path lands' : 'paths land'} in another pod.`,
      ...base,
    };
  if (measured === 0)
    return {
      kind: 'notMeasured',
      tone: 'muted',
      label: 'not measured',
      detail: report.errors[0] ?? 'The last probe measured no path.',
      ...base,
    };
  return {
    kind: 'reachable',
    tone: 'ok',
    label: `${reachable} ${reachable === 1 ? 'path' : 'paths'} reachable`,
    detail: `Measured: every path answered${report.errors.length ? ` (${report.errors.length} could not be measured)` : ''}.`,
    ...base,
  };
}
