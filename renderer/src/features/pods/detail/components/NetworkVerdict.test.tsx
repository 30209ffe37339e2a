// @vitest-environment jsdom
/**
 * The pod at a glance, on the real router and engine (fakes at the OS boundary): the Overview leads with the network
 * verdict — IPs from the CNI result, the last probe with its time and each failing path — and the header shows the
 * network's own verdict beside "Ready", so a pod with failing paths never shows a green "Ready" alone. A stopped pod
 * keeps no green mark. Reachability has a tab of its own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { act, cleanup, screen, waitFor, within } from '@testing-library/react';
import type { ProbePath, ProbeReport } from '../../../../../../shared/domain/probe';
import { renderWithEngine } from '../../../../test/render-with-engine';
import { useNavigation } from '../../../../lib/navigation';
import { queryKeys } from '../../../../lib/query-keys';
import { LOCAL_ENDPOINT_ID } from '../../../../../../shared/domain/endpoints';
import { PodsPage } from '../../components/PodsPage';

afterEach(() => {
  cleanup();
  useNavigation.setState({ detailTab: 'overview', selectedId: undefined });
});

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

describe('network verdict at a glance', () => {
  it('leads the Overview with the last probe and its failing paths, and the header names them beside Ready', async () => {
    const { engine, queryClient } = await renderWithEngine(<PodsPage />);
    const { id } = await engine.run({ config: { metadata: { name: 'web', namespace: 'default', uid: 'u1' } } });
    const report: ProbeReport = {
      sandboxId: id,
      measuredAt: new Date().toISOString(),
      measuredBy: 'TCP connect',
      durationMs: 20,
      trigger: 'onDemand',
      errors: [],
      paths: [
        path({ kind: 'gateway', to: '10.0.0.1:4000' }),
        path({ to: '10.0.0.7:80', verdict: 'timeout' }),
        path({ kind: 'hostPort', from: 'host', to: '127.0.0.1:8080', verdict: 'refused' }),
      ],
    };
    act(() => useNavigation.getState().openPod(id, 'overview'));
    const card = await screen.findByTestId('network-verdict');
    // the engine has no report yet: not measured, grey
    await waitFor(() => expect(card.dataset.verdict).toBe('notMeasured'));
    // a probe's report arrives (as Probe's reply writes it into the cache)
    act(() => queryClient.setQueryData(queryKeys.podProbe(LOCAL_ENDPOINT_ID, id), report));
    await waitFor(() => expect(card.dataset.verdict).toBe('failing'));
    expect(within(card).getByTestId('verdict-reach').textContent).toContain('2 of 3 paths failing');
    expect(within(card).getByTestId('verdict-reach-at').textContent).toContain('measured at');
    const failing = within(card).getByTestId('verdict-failing');
    expect(failing.textContent).toContain('timed out peer · network pod → 10.0.0.7:80/tcp');
    expect(failing.textContent).toContain('refused host port host → 127.0.0.1:8080/tcp');
    const ip = (await engine.status(id)).ip;
    expect(within(card).getByTestId('verdict-ip').textContent).toContain(ip);
    expect(card.textContent).toContain('recorded, not measured');
    // no throughput or CHECK ran: said so, not green
    expect(within(card).getByTestId('verdict-check').textContent).toContain('not run');

    const head = screen.getByTestId('header-net-verdict');
    expect(head.textContent).toContain('network: 2 of 3 paths failing');
    expect(head.querySelector('.pill-bad')).not.toBeNull();
    expect(screen.getByRole('tab', { name: /Reachability/ }).textContent).toContain('2 failing');

    await act(() => engine.stop(id));
    // what the app's event dispatcher does on sandbox.changed (the app shell is not rendered here)
    await act(() => queryClient.invalidateQueries({ queryKey: queryKeys.pod(LOCAL_ENDPOINT_ID, id) }));
    await waitFor(() => expect(screen.getByTestId('header-net-verdict').dataset.verdict).toBe('notReady'));
    expect(screen.getByTestId('network-verdict').querySelector('.pill-ok')).toBeNull();
  });
});
