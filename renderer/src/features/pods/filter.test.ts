import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildPodIndex, createIndexedFilter, filterIndex, filterPods, labelSelectorError, matchesLabel } from './filter';
import type { PodFilters } from './store';
import { pod } from '../../test/pod-summary';

describe('pods filtering', () => {
  const pods = [
    pod('web', 'prod', { labels: { app: 'web', tier: 'fe' }, createdAtNs: '3' }),
    pod('db', 'prod', { labels: { app: 'db' }, state: 'SANDBOX_NOTREADY', ip: '', createdAtNs: '2' }),
    pod('web', 'dev', { id: 'web2', ip: '10.0.0.9', additionalIps: ['fd00::9'], createdAtNs: '10' }),
  ];
  it('filters by text (name, id, IPs, labels), namespace, state and label selector; newest first', () => {
    expect(filterPods(pods, { text: 'fd00::9', namespace: '', state: '', label: '' }).map((p) => p.id)).toEqual(['web2']);
    expect(filterPods(pods, { text: 'web', namespace: '', state: '', label: '' }).map((p) => p.id)).toEqual(['web2', 'web-id']);
    expect(filterPods(pods, { text: '', namespace: 'prod', state: 'SANDBOX_NOTREADY', label: '' }).map((p) => p.id)).toEqual(['db-id']);
    expect(filterPods(pods, { text: '', namespace: '', state: '', label: 'app=web,tier' }).map((p) => p.id)).toEqual(['web-id']);
  });
  it('label selectors use the Kubernetes syntax (key, !key, =, !=, in, notin), and a bad one matches nothing', () => {
    expect(matchesLabel({ a: '1' }, 'a')).toBe(true);
    expect(matchesLabel({ a: '1' }, 'a=2')).toBe(false);
    expect(matchesLabel({ a: '1' }, '!a')).toBe(false);
    expect(matchesLabel({ app: 'api' }, 'app in (web, api)')).toBe(true);
    expect(matchesLabel({ app: 'api', tier: 'x' }, 'app in (web,api),tier notin (x)')).toBe(false);
    // a value may not contain "=": Kubernetes rejects it, and so does the filter (with an error shown)
    expect(matchesLabel({ a: 'x=y' }, 'a=x=y')).toBe(false);
    expect(labelSelectorError('a=x=y')).toMatch(/expected "," between requirements, found "=" \(at column 4\)/);
    expect(filterPods(pods, { text: '', namespace: '', state: '', label: 'app in (web' })).toEqual([]);
  });
});

describe('the filter index (a keystroke scans precomputed keys, never re-sorts)', () => {
  const none: PodFilters = { text: '', namespace: '', state: '', label: '' };
  const many = Array.from({ length: 300 }, (_, i) =>
    pod(`pod-${i}`, `ns-${i % 7}`, {
      id: `${i.toString(16).padStart(4, '0')}abc${i}`,
      ip: `10.1.${i >> 8}.${i & 255}`,
      labels: { app: `app-${i % 11}`, Tier: i % 2 ? 'FE' : 'be' },
      state: i % 5 ? 'SANDBOX_READY' : 'SANDBOX_NOTREADY',
      // nanosecond strings of different lengths: numeric order, not string order
      createdAtNs: String(i * 37 + (i % 3) * 1_000_000_000),
    }),
  );
  const naive = (f: PodFilters) => {
    const t = f.text.trim().toLowerCase();
    return many
      .filter((p) => (!f.namespace || p.metadata.namespace === f.namespace) && (!f.state || p.state === f.state))
      .filter((p) =>
        [p.id, p.metadata.name, p.metadata.namespace, p.ip, ...Object.entries(p.labels).map(([k, v]) => `${k}=${v}`)].some((h) =>
          h.toLowerCase().includes(t),
        ),
      )
      .sort((a, b) => (BigInt(b.createdAtNs) > BigInt(a.createdAtNs) ? 1 : BigInt(b.createdAtNs) < BigInt(a.createdAtNs) ? -1 : 0))
      .map((p) => p.id);
  };

  it('sorts once, newest first by the numeric creation time, and an empty filter returns that very array', () => {
    const index = buildPodIndex(many);
    const ns = index.rows.map((p) => BigInt(p.createdAtNs));
    expect(ns.every((n, i) => i === 0 || ns[i - 1]! >= n)).toBe(true);
    expect(filterIndex(index, none)).toBe(index.rows);
    // keys are lowercase: "Tier=FE" is found by "tier=fe"
    expect(filterIndex(index, { ...none, text: 'TIER=fe' })).toHaveLength(150);
  });

  it('typing, deleting and retyping (narrowing over the last result) always gives what a full scan gives', () => {
    const alphabet = ['a', 'p', '-', '1', '2', '3', 'n', 's', '.', '0', 'f', 'e', '=', 'BS'];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }),
        fc.constantFrom('', 'ns-3'),
        fc.constantFrom('', 'SANDBOX_READY'),
        (keys, namespace, state) => {
          const run = createIndexedFilter(buildPodIndex(many));
          let text = '';
          for (const k of keys) {
            text = k === 'BS' ? text.slice(0, -1) : text + k;
            const f: PodFilters = { text, namespace, state: state as PodFilters['state'], label: '' };
            expect(run(f).map((p) => p.id)).toEqual(naive(f));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
