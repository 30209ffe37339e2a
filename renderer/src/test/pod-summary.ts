import type { SandboxSummary } from '../../../shared/domain/sandbox';

/** A list row for renderer tests: ready, one IPv4 address, no ports or limits unless `extra` says otherwise. */
export const pod = (name: string, ns: string, extra: Partial<SandboxSummary> = {}): SandboxSummary => ({
  id: `${name}-id`,
  name,
  metadata: { name, namespace: ns, uid: 'u', attempt: 0 },
  state: 'SANDBOX_READY',
  internalState: 'Ready',
  createdAt: '2026-01-01T00:00:00Z',
  createdAtNs: '1',
  labels: {},
  annotations: {},
  runtimeHandler: '',
  hostNetwork: false,
  ip: '10.0.0.1',
  additionalIps: [],
  hostPorts: [],
  bandwidth: {},
  ...extra,
});
