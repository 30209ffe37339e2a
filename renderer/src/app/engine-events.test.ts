import { describe, expect, it } from 'vitest';
import { QueryClient } from '@tanstack/react-query';
import type { SandboxSummary } from '../../../shared/domain/sandbox';
import { podKeys } from '../features/pods/api/queries';
import { applyEvent } from './engine-events';
import { pod } from '../test/pod-summary';

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
