import { describe, expect, it } from 'vitest';
import { QueryClient } from '@tanstack/react-query';
import type { SandboxSummary } from '../../../shared/domain/sandbox';
import { podKeys } from '../features/pods/api/queries';
import { applyEvent } from './engine-events';
import { pod } from '../test/pod-summary';
import { queryKeys } from '../lib/query-keys';

describe('pushed events update the query cache', () => {
  it('upserts summaries, removes removed pods and drops their status', () => {
    const qc = new QueryClient();
    qc.setQueryData(podKeys.all('local'), [pod('web', 'prod')]);
    qc.setQueryData(podKeys.detail('local', 'web-id'), { stale: true });
    applyEvent(qc, { kind: 'sandbox', endpointId: 'local', event: { type: 'sandbox.added', id: 'db-id', summary: pod('db', 'prod') } });
    applyEvent(qc, {
      kind: 'sandbox',
      endpointId: 'local',
      event: { type: 'sandbox.changed', id: 'web-id', summary: pod('web', 'prod', { ip: '' }) },
    });
    expect(qc.getQueryData<SandboxSummary[]>(podKeys.all('local'))!.map((p) => [p.id, p.ip])).toEqual([
      ['db-id', '10.0.0.1'],
      ['web-id', ''],
    ]);
    applyEvent(qc, { kind: 'sandbox', endpointId: 'local', event: { type: 'sandbox.removed', id: 'web-id' } });
    expect(qc.getQueryData<SandboxSummary[]>(podKeys.all('local'))!.map((p) => p.id)).toEqual(['db-id']);
    expect(qc.getQueryData(podKeys.detail('local', 'web-id'))).toBeUndefined();
    // events for another endpoint never touch this one
    applyEvent(qc, { kind: 'sandbox', endpointId: 'containerd', event: { type: 'sandbox.removed', id: 'db-id' } });
    expect(qc.getQueryData<SandboxSummary[]>(podKeys.all('local'))).toHaveLength(1);
  });
});

describe('one list-update path for events and deltas', () => {
  it('a pushed delta and the same changes as engine events leave the same cache, removed pods dropped in both', () => {
    const seed = (qc: QueryClient) => {
      qc.setQueryData(queryKeys.pods('local'), [pod('web', 'prod'), pod('db', 'prod')]);
      qc.setQueryData(queryKeys.pod('local', 'web-id'), { open: true });
      qc.setQueryData(queryKeys.podLive('local', 'web-id'), { live: true });
    };
    const byEvents = new QueryClient();
    const byDelta = new QueryClient();
    seed(byEvents);
    seed(byDelta);
    applyEvent(byEvents, {
      kind: 'sandbox',
      endpointId: 'local',
      event: { type: 'sandbox.added', id: 'api-id', summary: pod('api', 'prod') },
    });
    applyEvent(byEvents, {
      kind: 'sandbox',
      endpointId: 'local',
      event: { type: 'sandbox.changed', id: 'db-id', summary: pod('db', 'prod', { ip: '' }) },
    });
    applyEvent(byEvents, { kind: 'sandbox', endpointId: 'local', event: { type: 'sandbox.removed', id: 'web-id' } });
    applyEvent(byDelta, {
      kind: 'delta',
      endpointId: 'local',
      pods: { upserts: [pod('api', 'prod'), pod('db', 'prod', { ip: '' })], removed: ['web-id'] },
    });
    const rows = (qc: QueryClient) => qc.getQueryData<SandboxSummary[]>(queryKeys.pods('local'))!.map((p) => [p.id, p.ip]);
    expect(rows(byDelta)).toEqual(rows(byEvents));
    expect(rows(byDelta)).toEqual([
      ['api-id', '10.0.0.1'],
      ['db-id', ''],
    ]);
    for (const qc of [byEvents, byDelta]) {
      expect(qc.getQueryData(queryKeys.pod('local', 'web-id'))).toBeUndefined();
      expect(qc.getQueryData(queryKeys.podLive('local', 'web-id'))).toBeUndefined();
    }
  });
});
