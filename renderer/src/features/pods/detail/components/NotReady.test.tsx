// @vitest-environment jsdom
/**
 * A NOTREADY pod says why (pause exit, pending cleanup) and what Stop will release, and Stop stays enabled for it:
 * a dead pause keeps its network until a stop releases it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { renderWithEngine } from '../../../../test/render-with-engine';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { PodActions } from '../../components/PodActions';
import { NotReadySection } from './OverviewTab';

afterEach(cleanup);

async function notReadyStatus(patch: Partial<SandboxStatus>): Promise<SandboxStatus> {
  const { engine } = await renderWithEngine(<div />);
  const { id } = await engine.run({
    config: {
      metadata: { name: 'web', namespace: 'default', uid: 'u1', attempt: 0 },
      port_mappings: [{ protocol: 'TCP', container_port: 80, host_port: 18080 }],
    },
  });
  const st = await engine.status(id);
  cleanup();
  return { ...st, state: 'SANDBOX_NOTREADY', internalState: 'NotReady', pause: { ...st.pause, status: 'stopped' }, ...patch };
}

describe('a NOTREADY pod', () => {
  it('says the pause exited (signal, time) and lists what Stop will release: addresses, host ports, the netns', async () => {
    const s = await notReadyStatus({ pauseExit: { at: '2026-01-01T00:00:00.000Z', signal: 'SIGKILL' } });
    render(<NotReadySection s={s} />);
    expect(screen.getByTestId('not-ready-reason').textContent).toBe('pause exited with signal SIGKILL at 2026-01-01T00:00:00.000Z');
    const release = screen.getByTestId('stop-releases').textContent!;
    expect(release).toContain('CNI DEL of every network: addresses');
    expect(release).toContain('host port DNAT 18080/tcp→80');
    expect(release).toContain(`network namespace ${s.netnsPath}`);
  });

  it('shows the pending cleanup with the plugin, network and what it holds', async () => {
    const s = await notReadyStatus({
      notReadyReason: 'cleanup pending: …',
      cleanupPending: [
        {
          kind: 'cni',
          network: 'net',
          ifName: 'eth0',
          plugin: 'bridge',
          index: 0,
          holds: ['IPAM reservation 10.1.0.5/24'],
          error: 'iptables busy',
          since: '2026-01-01T00:00:00.000Z',
        },
      ],
    });
    render(<NotReadySection s={s} />);
    expect(screen.getByTestId('cleanup-pending').textContent).toBe(
      'CNI DEL of bridge #0 on net/eth0 (holds IPAM reservation 10.1.0.5/24): iptables busy',
    );
    expect(screen.getByTestId('stop-releases').textContent).toContain('retry: CNI DEL of bridge #0 on net/eth0');
  });

  it('keeps Stop enabled (today it was enabled only for READY pods)', async () => {
    const s = await notReadyStatus({});
    await renderWithEngine(<PodActions pods={[s]} compact />);
    expect((screen.getByRole('button', { name: 'Stop' }) as HTMLButtonElement).disabled).toBe(false);
  });
});
