/**
 * `throughput(id)`: a bulk TCP transfer each way through the pod's real veth, with the tbf the bandwidth plugin
 * installed read from the kernel first. Ingress: the host sends to the pod IP (shaped by the tbf on the host end of
 * the veth). Egress: the pod sends to its gateway, the bridge address on the host (shaped by the tbf on the ifb).
 * Only ready sandboxes with their own netns are measured: a stopped pod has nothing to measure.
 */
import { analyzeBandwidth } from '../../../shared/domain/bandwidth';
import { PodscopeError, serializeError } from '../../../shared/domain/errors';
import { formatBitsPerSecond } from '../../../shared/domain/bandwidth';
import {
  formatMegabytes,
  type ThroughputDirection,
  type ThroughputDirectionReport,
  type ThroughputOptions,
  type ThroughputProgress,
  type ThroughputReport,
} from '../../../shared/domain/measure';
import { readyPod, type PodFacts } from '../common/pod-facts';
import type { ThroughputDeps } from './deps';
import { computeRate, measuredEnough, unshapedBelow, verdictFor } from './rate';

/**
 * The default time bound per direction. A bound, not a length: the transfer stops as soon as the rate past the burst
 * is known (about a second on a quiet machine). It is generous because reaching the knee first means pushing the
 * whole burst (kubelet's pods get ~193 MB) at line speed through two small Node processes, which a busy machine does
 * several times slower: at 5 s, a load of 15 on 2 cores ended before the knee ("burst not passed") where 15 s measured.
 */
export const DEFAULT_THROUGHPUT_MS = 15_000;
export const MAX_THROUGHPUT_MS = 20_000;
/** bytes the sender may send without a limit to respect (an unshaped veth moves GB/s) */
const UNSHAPED_MAX_BYTES = 4 * 1024 ** 3;

export interface MeasureDeps {
  deps: ThroughputDeps;
  onProgress?: (p: ThroughputProgress) => void;
  signal?: AbortSignal;
}

/** The eth0 address of the pod's primary family and the gateway CNI gave it in that family. */
function addresses(rec: PodFacts): { podIp: string; gateway?: string } {
  const podIp = rec.ip;
  if (!podIp) throw new PodscopeError('FailedPrecondition', `sandbox ${rec.id} has no pod IP to send to`);
  const v6 = podIp.includes(':');
  const ips = (rec.network?.networks ?? []).flatMap((n) => n.result?.ips ?? []);
  const own = ips.find((i) => i.address.split('/')[0] === podIp);
  const gateway = own?.gateway ?? ips.find((i) => i.gateway && i.gateway.includes(':') === v6)?.gateway;
  return { podIp, gateway };
}

export async function measureThroughput(deps: MeasureDeps, idOrPrefix: string, opts: ThroughputOptions = {}): Promise<ThroughputReport> {
  const { deps: engine } = deps;
  const rec = readyPod(engine.pods, idOrPrefix, 'measure');
  if (await engine.netnsClosed(rec.netnsPath))
    throw new PodscopeError('FailedPrecondition', `sandbox ${rec.id}: its network namespace ${rec.netnsPath} is gone`);
  const durationMs = Math.min(MAX_THROUGHPUT_MS, Math.max(500, opts.durationMs ?? DEFAULT_THROUGHPUT_MS));
  const measuredAt = new Date();
  const hostDevices = [
    ...new Set((rec.network?.networks ?? []).flatMap((n) => (n.result?.interfaces ?? []).filter((i) => !i.sandbox).map((i) => i.name))),
  ];
  const live = await engine.liveView(rec, hostDevices, deps.signal);
  const requested = analyzeBandwidth(rec.config.annotations);
  const { podIp, gateway } = addresses(rec);
  const wanted = opts.directions ?? ['ingress', 'egress'];

  const one = async (direction: ThroughputDirection): Promise<ThroughputDirectionReport> => {
    const role = direction === 'ingress' ? 'host-veth' : 'ifb';
    const tbf = live.qdiscs.find((q) => q.role === role && q.kind === 'tbf');
    const req = requested[direction]?.bitsPerSecond;
    const requestedBps = req === undefined ? undefined : Number(req);
    const appliedBps = tbf?.rateBitsPerSecond;
    const burstBytes = tbf?.burstBytes;
    const limitBps = appliedBps ?? requestedBps;
    const base = {
      direction,
      requestedBps,
      appliedBps,
      burstBytes,
      device: tbf?.dev,
      unshapedBelowBytes: unshapedBelow(burstBytes, limitBps),
    };
    const fail = (note: string, error?: unknown): ThroughputDirectionReport => ({
      ...base,
      overallBps: 0,
      totalBytes: 0,
      elapsedMs: 0,
      pastBurst: false,
      verdict: 'failed',
      note,
      path: '',
      ...(error ? { error: serializeError(error) } : {}),
    });
    if (!wanted.includes(direction)) return fail('not measured (not asked for)');
    const listenAddress = direction === 'ingress' ? podIp : gateway;
    if (!listenAddress) return fail('no gateway address in the CNI result: there is no host address on the bridge for the pod to send to');
    // enough bytes to empty the bucket and then run the rest of the time at the limit, or for about a second at
    // line speed past the burst when the limit does not hold (so that case is seen, not cut off by the byte bound)
    const maxBytes =
      limitBps === undefined
        ? UNSHAPED_MAX_BYTES
        : Math.min(UNSHAPED_MAX_BYTES, Math.ceil((burstBytes ?? 0) + Math.max((limitBps / 8) * (durationMs / 1000) * 2, 512 * 1024 ** 2)));
    try {
      const out = await engine.meter.transfer({
        direction,
        netnsPath: rec.netnsPath,
        listenAddress,
        durationMs,
        maxBytes,
        signal: deps.signal,
        onSample: (s) => deps.onProgress?.({ direction, elapsedMs: s.tMs, bytes: s.bytes, durationMs }),
        // stop once the rate past the burst is known to TARGET_PRECISION (rate.ts), not at the time bound
        enough: (samples) => measuredEnough({ samples, burstBytes, limitBps }),
      });
      if (out.samples.length === 0) return { ...fail('the receiver got no bytes'), path: out.path };
      const rate = computeRate({ samples: out.samples, burstBytes, limitBps });
      const verdict = verdictFor(rate, limitBps);
      return {
        ...base,
        ...rate,
        verdict,
        note: describe(verdict, rate.measuredBps, limitBps, burstBytes, rate.totalBytes, rate.precision),
        path: out.path,
      };
    } catch (e) {
      return fail(`transfer failed: ${(e as Error).message}`, e);
    }
  };
  // one direction after the other: both share the veth and the CPU
  const ingress = await one('ingress');
  const egress = await one('egress');
  return { id: rec.id, measuredAt: measuredAt.toISOString(), durationMs, ingress, egress };
}

const human = (bps: number) => formatBitsPerSecond(BigInt(Math.round(bps)));
/** " ±3.1%" (95%), or nothing when the window was too short to tell */
const pm = (precision: number | undefined) => (precision === undefined ? '' : ` ±${(precision * 100).toFixed(1)}%`);

function describe(
  verdict: string,
  measured: number | undefined,
  limit: number | undefined,
  burst: number | undefined,
  total: number,
  precision?: number,
): string {
  switch (verdict) {
    case 'shaped':
      return `measured ${human(measured!)}${pm(precision)} past the burst against a limit of ${human(limit!)}`;
    case 'notShaped':
      return `measured ${human(measured!)}${pm(precision)} past the burst: faster than the limit of ${human(limit!)}`;
    case 'burstNotPassed':
      return `the transfer (${formatMegabytes(total)}) never used up the ${burst === undefined ? '?' : formatMegabytes(burst)} burst: the limit of ${human(limit!)} did not engage`;
    default:
      return `nothing shapes this direction: ${measured === undefined ? '' : `${human(measured)} is the veth's own speed`}`;
  }
}
