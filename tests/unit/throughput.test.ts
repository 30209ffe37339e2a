/**
 * The rate past the tbf burst (pure), and the throughput verb on the real engine over the touch-point fakes: what
 * it reads from the kernel view, what it sends the meter, the verdicts, and that stopped pods are never measured.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  computeRate,
  measuredEnough,
  TARGET_PRECISION,
  unshapedBelow,
  verdictFor,
  type ByteSample,
} from '../../electron/engine/throughput/rate';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { hasCode } from '../../shared/domain/errors';

/** line speed until `burst` bytes, then `shaped` bytes/ms; one sample every 50 ms */
function curve(lineBytesPerMs: number, burst: number, shapedBytesPerMs: number, ms: number): ByteSample[] {
  const knee = burst / lineBytesPerMs;
  const out: ByteSample[] = [];
  for (let t = 50; t <= ms; t += 50)
    out.push({ tMs: t, bytes: Math.round(t <= knee ? lineBytesPerMs * t : burst + shapedBytesPerMs * (t - knee)) });
  return out;
}

describe('computeRate', () => {
  it('measures the shaped rate after the burst, not the average the burst inflates', () => {
    const r = computeRate({ samples: curve(250_000, 193_273_526, 1250, 5000), burstBytes: 193_273_526, limitBps: 10e6 });
    expect(r.pastBurst).toBe(true);
    expect(r.measuredBps!).toBeCloseTo(10e6, -3);
    expect(r.overallBps).toBeGreaterThan(300e6);
    expect(r.window!.startMs).toBeGreaterThan(193_273_526 / 250_000);
    expect(verdictFor(r, 10e6)).toBe('shaped');
  });

  it('finds the knee when the receiver counts payload and the bucket empties before `burst` payload bytes (headers are charged too)', () => {
    const samples = curve(250_000, 0.955 * 193_273_526, 1200, 5000);
    const r = computeRate({ samples, burstBytes: 193_273_526, limitBps: 10e6 });
    expect(r.pastBurst).toBe(true);
    expect(r.measuredBps!).toBeCloseTo(9.6e6, -3);
  });

  it('measures from the start when an earlier transfer left the bucket empty', () => {
    const r = computeRate({ samples: curve(250_000, 0, 1250, 4000), burstBytes: 193_273_526, limitBps: 10e6 });
    expect(r.pastBurst).toBe(true);
    expect(r.measuredBps!).toBeCloseTo(10e6, -3);
  });

  it('says the burst was not passed when the transfer ends inside it', () => {
    const r = computeRate({ samples: curve(10_000, 193_273_526, 1250, 5000), burstBytes: 193_273_526, limitBps: 10e6 });
    expect(r.pastBurst).toBe(false);
    expect(verdictFor(r, 10e6)).toBe('burstNotPassed');
  });

  it('flags a limit that does not hold: past the whole burst and still fast', () => {
    const r = computeRate({ samples: curve(100_000, 50_000_000, 100_000, 5000), burstBytes: 50_000_000, limitBps: 10e6 });
    expect(r.pastBurst).toBe(true);
    expect(verdictFor(r, 10e6)).toBe('notShaped');
  });

  it('without a tbf takes the second half of the transfer and reports no limit', () => {
    const r = computeRate({ samples: curve(1000, 0, 1000, 4000) });
    expect(r.measuredBps!).toBeCloseTo(8e6, -3);
    expect(verdictFor(r, undefined)).toBe('noLimit');
  });

  it('stops as soon as the rate past the burst is known to the stated precision, and says how precise it is', () => {
    const all = curve(250_000, 193_273_526, 1250, 5000);
    const input = (samples: ByteSample[]) => ({ samples, burstBytes: 193_273_526, limitBps: 10e6 });
    // the first prefix of the transfer that is enough: a little past the knee (773 ms) + settling + half a second
    const n = all.findIndex((_, i) => measuredEnough(input(all.slice(0, i + 1)))) + 1;
    expect(n).toBeGreaterThan(0);
    const stopAt = all[n - 1]!.tMs;
    expect(stopAt).toBeGreaterThan(773 + 300 + 500);
    expect(stopAt).toBeLessThan(2000);
    const r = computeRate(input(all.slice(0, n)));
    expect(r.pastBurst).toBe(true);
    expect(r.precision!).toBeLessThanOrEqual(TARGET_PRECISION);
    expect(r.measuredBps!).toBeCloseTo(10e6, -4);
    // inside the burst it is never enough
    expect(measuredEnough(input(all.filter((s) => s.tMs < 770)))).toBe(false);
  });

  it('a saw-toothing flow (TCP pausing behind the tbf) is not called precise on a short window', () => {
    // 1250 B/ms, but every third 50 ms step delivers nothing and the next twice as much
    const samples: ByteSample[] = [];
    let bytes = 0;
    for (let t = 50, i = 0; t <= 3000; t += 50, i++) {
      bytes += i % 3 === 0 ? 0 : i % 3 === 1 ? 125_000 : 62_500;
      samples.push({ tMs: t, bytes });
    }
    // nothing shapes it: the second half (500 ms, ten samples) is the window
    const r = computeRate({ samples: samples.slice(0, 20) });
    expect(r.precision!).toBeGreaterThan(TARGET_PRECISION);
    expect(measuredEnough({ samples: samples.slice(0, 20) })).toBe(false);
    // the same mean rate without the pauses is precise on the same window
    const even = samples.map((s, i) => ({ tMs: s.tMs, bytes: 62_500 * (i + 1) }));
    expect(computeRate({ samples: even.slice(0, 20) }).precision!).toBeLessThanOrEqual(TARGET_PRECISION);
  });

  it('warns about short flows only when the burst holds more than a second at the limit', () => {
    expect(unshapedBelow(193_273_526, 10e6)).toBe(193_273_526);
    expect(unshapedBelow(100_000, 10e6)).toBeUndefined();
    expect(unshapedBelow(undefined, 10e6)).toBeUndefined();
  });
});

describe('SandboxEngine.throughput over the fakes', () => {
  let te: TestEngine;
  afterEach(async () => te?.close());

  const run = async (annotations: Record<string, string>) => {
    te = await createTestEngine();
    const { id } = await te.engine.run({ config: { metadata: { name: 'bw', namespace: 'default', uid: 'u' }, annotations } });
    return id;
  };

  it('sends host → pod IP and pod → gateway, reads rate and burst from the kernel view, reports progress', async () => {
    const id = await run({ 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' });
    const st = await te.engine.status(id);
    const r = await te.engine.throughput(id, { durationMs: 3000 });
    expect(te.throughput.calls.map((c) => [c.direction, c.listenAddress])).toEqual([
      ['ingress', st.ip],
      ['egress', st.networks[1]!.result!.ips!.find((i) => i.address.startsWith(st.ip))!.gateway],
    ]);
    for (const d of [r.ingress, r.egress]) {
      expect(d).toMatchObject({
        requestedBps: 10e6,
        appliedBps: 10e6,
        burstBytes: 536_870_911,
        pastBurst: true,
        verdict: 'shaped',
        unshapedBelowBytes: 536_870_911,
      });
      expect(d.measuredBps!).toBeCloseTo(10e6, -3);
    }
    expect(te.throughput.calls[0]!.maxBytes).toBeGreaterThan(536_870_911);
    expect(te.events.filter((e) => e.type === 'sandbox.measureProgress').length).toBe(2 * 60);
    expect(Date.parse(r.measuredAt)).not.toBeNaN();
  });

  it('reports a limit that does not shape as notShaped', async () => {
    const id = await run({ 'kubernetes.io/ingress-bandwidth': '10M' });
    te.throughput.curves.ingress = { lineBytesPerMs: 2e5, burstBytes: 1e6, shapedBytesPerMs: 2e5 };
    const r = await te.engine.throughput(id);
    expect(r.ingress.verdict).toBe('notShaped');
    expect(r.egress.verdict).toBe('noLimit');
  });

  it('a failing transfer is a failed direction with the error, not a verdict', async () => {
    const id = await run({ 'kubernetes.io/ingress-bandwidth': '10M' });
    te.throughput.failWith = new Error('connection refused');
    const r = await te.engine.throughput(id);
    expect(r.ingress.verdict).toBe('failed');
    expect(r.ingress.note).toContain('connection refused');
  });

  it('never measures a stopped pod', async () => {
    const id = await run({ 'kubernetes.io/ingress-bandwidth': '10M' });
    await te.engine.stop(id);
    await expect(te.engine.throughput(id)).rejects.toSatisfy((e) => hasCode(e, 'FailedPrecondition'));
    expect(te.throughput.calls).toEqual([]);
  });
});

describe('CLI pieces for `podscope throughput` and `probe --throughput`', () => {
  let te: TestEngine;
  afterEach(async () => te?.close());

  it('gives {ingress, egress: {requestedBps, measuredBps, burstBytes}} and exit 0 when both directions are shaped', async () => {
    const { measureThroughputVia, throughputJson, throughputExitCode, describeThroughput } =
      await import('../../electron/cli/commands/throughput');
    te = await createTestEngine();
    const { id } = await te.engine.run({
      config: {
        metadata: { name: 'bw', namespace: 'default', uid: 'u' },
        annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
      },
    });
    const lines: string[] = [];
    const report = await measureThroughputVia(te.engine, id, { durationMs: 2000, onProgress: (l) => lines.push(l) });
    const json = throughputJson(report);
    expect(json.ingress).toMatchObject({ requestedBps: 10_000_000, burstBytes: 536_870_911, verdict: 'shaped' });
    expect(json.egress.measuredBps).toBeGreaterThan(9_000_000);
    expect(throughputExitCode(report)).toBe(0);
    const text = describeThroughput(report);
    expect(text).toContain('WARNING: transfers smaller than 537 MB are not shaped (counted on the wire');
    // one size format for every number of the report, each saying what it counts: never MiB beside MB
    expect(text).toContain('1 MB = 10^6 bytes');
    expect(text).toContain('tbf burst 537 MB (536870911 bytes, on the wire)');
    expect(text).toMatch(/overall, [\d.]+ [kMG]?B of payload received\)/);
    expect(text).not.toMatch(/MiB|KiB|GiB/);
    expect(lines[0]).toMatch(/^ingress: /);
    te.throughput.curves.egress = { lineBytesPerMs: 2e5, burstBytes: 1e6, shapedBytesPerMs: 2e5 };
    expect(throughputExitCode(await te.engine.throughput(id))).toBe(5);
  });
});
