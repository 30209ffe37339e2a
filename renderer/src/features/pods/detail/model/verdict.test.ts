/**
 * The network verdict at a glance: green only for paths measured while the pod is ready; failing paths are counted
 * and listed; a stopped pod or one never probed gets a grey "no verdict", whatever its last report said.
 */
import { describe, expect, it } from 'vitest';
import type { ProbePath, ProbeReport } from '../../../../../../shared/domain/probe';
import { networkVerdict } from './verdict';

const path = (over: Partial<ProbePath>): ProbePath => ({
  kind: 'peer',
  from: 'pod',
  to: '10.0.0.2:80',
  proto: 'tcp',
  verdict: 'reachable',
  measured: true,
  note: '',
  ...over,
});
const report = (paths: ProbePath[]): ProbeReport => ({
  sandboxId: 'x',
  measuredAt: '2026-11-27T10:00:00Z',
  measuredBy: 'TCP connect',
  durationMs: 10,
  trigger: 'onDemand',
  paths,
  errors: [],
});
const ready = { state: 'SANDBOX_READY' as const, hostNetwork: false };

describe('networkVerdict', () => {
  it('is green with its time when every measured path answered (isolated by design aside)', () => {
    const v = networkVerdict(ready, report([path({}), path({ verdict: 'isolated' }), path({ measured: false, verdict: 'timeout' })]));
    expect(v).toMatchObject({ kind: 'reachable', tone: 'ok', reachable: 1, measured: 2, measuredAt: '2026-11-27T10:00:00Z' });
  });

  it('is red and names each failing path, with its index in the report', () => {
    const v = networkVerdict(ready, report([path({}), path({ verdict: 'timeout', to: '10.0.0.3:80' }), path({ verdict: 'refused' })]));
    expect(v.kind).toBe('failing');
    expect(v.tone).toBe('bad');
    expect(v.label).toBe('2 of 3 paths failing');
    expect(v.failing.map((f) => f.index)).toEqual([1, 2]);
  });

  it('is red, never green, when a path connects but its MTU audit found a black hole', () => {
    const blackHole = { pathMtu: 1404, interfaceMtu: 1500, blackHole: true, probes: 9, note: 'sizes over 1404 vanish' };
    const v = networkVerdict(ready, report([path({}), path({ kind: 'gateway', mtu: blackHole })]));
    expect(v).toMatchObject({ kind: 'failing', tone: 'bad', label: '1 of 2 paths failing' });
    expect(v.failing.map((f) => f.index)).toEqual([1]);
    expect(v.detail).toContain('full-size packets (an MTU black hole)');
  });

  it('never shows green for a pod that is not ready, even with an all-reachable report from before', () => {
    const v = networkVerdict({ state: 'SANDBOX_NOTREADY', hostNetwork: false }, report([path({})]));
    expect(v.tone).toBe('muted');
    expect(v.kind).toBe('notReady');
  });

  it('says not measured when no probe ran, or when the probe measured nothing', () => {
    expect(networkVerdict(ready, null)).toMatchObject({ kind: 'notMeasured', tone: 'muted' });
    expect(networkVerdict(ready, report([path({ measured: false, verdict: 'notApplicable' })]))).toMatchObject({
      kind: 'notMeasured',
      tone: 'muted',
    });
  });

  it('warns (amber, not green) when a path lands in another pod', () => {
    expect(networkVerdict(ready, report([path({}), path({ verdict: 'shadowed' })]))).toMatchObject({ kind: 'shadowed', tone: 'warn' });
  });
});
