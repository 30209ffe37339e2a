/**
 * The read index answers exactly what a full scan of the records would (it is only faster): prefix resolution as
 * containerd's truncindex, filters by state and label pairs, newest-first order, and views rebuilt after a save.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toCriState, type InternalState } from '../../shared/domain/sandbox';
import { SandboxReadIndex } from '../../electron/engine/pods/read-index';
import { RECORD_VERSION, type SandboxRecord } from '../../electron/engine/pods/record';

function rec(id: string, createdAtNs: string, state: InternalState, labels: Record<string, string>): SandboxRecord {
  return {
    version: RECORD_VERSION,
    id,
    name: `n-${id}`,
    runtimeHandler: '',
    ipPreference: 'ipv4',
    createdAt: '2026-01-01T00:00:00Z',
    createdAtNs,
    state,
    config: { metadata: { name: `n-${id}`, namespace: 'ns', uid: id, attempt: 0 }, labels, annotations: {}, port_mappings: [] } as never,
    ip: '',
    additionalIps: [],
    pause: { status: 'running' } as never,
    rootDir: '/x',
    runDir: '/y',
    trace: [],
  };
}

describe('sandbox read index', () => {
  it('resolves a full id or a unique prefix, refuses an ambiguous or empty one, and knows nothing else', () => {
    const ix = new SandboxReadIndex();
    ix.upsert(rec('abc1', '1', 'Ready', {}));
    ix.upsert(rec('abc2', '2', 'Ready', {}));
    ix.upsert(rec('abd3', '3', 'Ready', {}));
    expect(ix.resolve('abc1')).toBe('abc1');
    expect(ix.resolve('abd')).toBe('abd3');
    expect(ix.resolve('zz')).toBeUndefined();
    expect(() => ix.resolve('abc')).toThrow(/ambiguous sandbox id prefix "abc": it matches 2 sandboxes/);
    expect(() => ix.resolve('')).toThrow(/can't be empty/);
    ix.delete('abc2');
    expect(ix.resolve('abc')).toBe('abc1');
  });

  it('rebuilds a view after the record is saved again, and keeps the same object while it is not', () => {
    const ix = new SandboxReadIndex();
    const r = rec('a', '1', 'Ready', { app: 'web' });
    ix.upsert(r);
    const first = ix.summary('a');
    expect(ix.summary('a')).toBe(first);
    r.state = 'NotReady';
    ix.upsert(r);
    expect(ix.summary('a')).not.toBe(first);
    expect(ix.summary('a')!.state).toBe('SANDBOX_NOTREADY');
    expect(ix.candidates({ state: 'SANDBOX_READY' })).toEqual([]);
    expect(ix.candidates({ state: 'SANDBOX_NOTREADY' })).toEqual(['a']);
  });

  it('gives the same answer as a scan for any records and filters (property)', () => {
    const id = fc.stringMatching(/^[0-9a-f]{1,4}$/);
    const labels = fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('web', 'db'), { maxKeys: 2 });
    const record = fc.record({ id, ns: fc.integer({ min: 1, max: 5 }), ready: fc.boolean(), labels });
    fc.assert(
      fc.property(
        fc.uniqueArray(record, { selector: (r) => r.id, maxLength: 25 }),
        fc.option(fc.stringMatching(/^[0-9a-f]{0,2}$/)),
        fc.option(fc.boolean()),
        fc.option(labels),
        fc.array(fc.nat(), { maxLength: 5 }),
        (recs, prefix, ready, sel, deletions) => {
          const ix = new SandboxReadIndex();
          const live = new Map(recs.map((r) => [r.id, rec(r.id, String(r.ns), r.ready ? 'Ready' : 'NotReady', r.labels)]));
          for (const r of live.values()) ix.upsert(r);
          for (const d of deletions) {
            const victim = [...live.keys()][d % Math.max(1, live.size)];
            if (victim !== undefined) {
              live.delete(victim);
              ix.delete(victim);
            }
          }
          const state = ready === null ? undefined : ready ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY';
          const filter = { idPrefix: prefix ?? undefined, state: state as never, labels: sel ?? undefined };
          const expected = [...live.values()]
            .filter((r) => !filter.idPrefix || r.id.startsWith(filter.idPrefix))
            .filter((r) => !filter.state || toCriState(r.state) === filter.state)
            .filter((r) => Object.entries(filter.labels ?? {}).every(([k, v]) => r.config.labels[k] === v))
            .sort((a, b) =>
              a.createdAtNs === b.createdAtNs ? (a.id < b.id ? -1 : 1) : BigInt(b.createdAtNs) > BigInt(a.createdAtNs) ? 1 : -1,
            )
            .map((r) => r.id);
          expect(ix.candidates(filter)).toEqual(expected);
          expect(ix.size).toBe(live.size);
        },
      ),
      { numRuns: 300 },
    );
  });
});
