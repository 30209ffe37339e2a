import { describe, expect, it } from 'vitest';
import { filterPods, labelSelectorError, matchesLabel } from './filter';
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
