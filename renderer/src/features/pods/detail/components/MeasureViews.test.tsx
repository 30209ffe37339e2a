// @vitest-environment jsdom
/**
 * The measurement views against the real router and the real engine over the touch-point fakes: the throughput
 * button (requested vs measured, burst bytes, the "not shaped below N MB" warning, measuredAt), and the truth rule:
 * a pod whose pause died shows no green bandwidth verdict and cannot be measured.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { act, cleanup, screen, waitFor } from '@testing-library/react';
import { useQuery } from '@tanstack/react-query';
import userEvent from '@testing-library/user-event';
import { renderWithEngine } from '../../../../test/render-with-engine';
import { useNavigation } from '../../../../lib/navigation';
import { useEngineEvents } from '../../../../app/engine-events';
import { useClient } from '../../../../lib/connection-context';
import { podStatusQuery } from '../api/queries';
import { PodDetail } from './PodDetail';

afterEach(() => {
  cleanup();
  useNavigation.setState({ detailTab: 'overview', selectedId: undefined });
});

function Selected() {
  useEngineEvents();
  const client = useClient();
  const id = useNavigation((s) => s.selectedId);
  const { data } = useQuery({ ...podStatusQuery(client, 'local', id ?? ''), enabled: !!id });
  return data ? <PodDetail summary={data} /> : null;
}

async function open() {
  const r = await renderWithEngine(<Selected />);
  const { id } = await r.engine.run({
    config: {
      metadata: { name: 'web', namespace: 'default', uid: 'u1', attempt: 0 },
      annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
    },
  });
  act(() => useNavigation.setState({ detailTab: 'bandwidth', selectedId: id }));
  return { ...r, id, user: userEvent.setup() };
}

describe('Bandwidth tab: measured throughput', () => {
  it('measures on demand and shows requested vs measured, the burst in bytes, the short-flow warning and when', async () => {
    const { user } = await open();
    await user.click(await screen.findByTestId('tp-run'));
    const ingress = await screen.findByTestId('tp-ingress', {}, { timeout: 5000 });
    expect(ingress.dataset.verdict).toBe('shaped');
    expect(screen.getByTestId('tp-requested-ingress').textContent).toBe('10 Mbit/s');
    expect(screen.getByTestId('tp-measured-ingress').textContent).toMatch(/^(9\.9\d*|10(\.0\d*)?) Mbit\/s$/);
    expect(screen.getByTestId('tp-burst-ingress').textContent).toBe('536,870,911 B');
    expect(screen.getByTestId('tp-unshaped-egress').textContent).toContain('transfers smaller than 537 MB are not shaped');
    // one unit system, said once: the 537 MB above is 536,870,911 B / 10^6, not MiB
    expect(screen.getByTestId('tp-units').textContent).toContain('1 MB = 1,000,000 B');
    expect(screen.getByTestId('throughput').textContent).not.toMatch(/MiB|KiB|GiB/);
    expect(screen.getByTestId('tp-measured-at').textContent).toMatch(/measured at \d\d:\d\d:\d\d/);
  });

  it('a pod whose pause died gets no green verdict and no measurement', async () => {
    const r = await open();
    await screen.findByTestId('bw-live-answer');
    r.fakes.runtime.exit(r.id);
    await r.engine.status(r.id); // the engine notices (its poll would, a little later)
    await waitFor(() => expect(screen.getByTestId('tp-not-ready')).toBeTruthy(), { timeout: 5000 });
    expect((screen.getByTestId('tp-run') as HTMLButtonElement).disabled).toBe(true);
    await waitFor(() => expect(screen.getByTestId('bw-live-answer').className).not.toContain('bwf-answer-ok'));
    expect(screen.getByTestId('bw-live-answer').textContent).toContain('not ready');
  });
});

describe('CNI trace tab: CHECK on demand', () => {
  it('runs CHECK, shows per-network outcomes with the time, the CHECK execs are in the trace of the pod; a failing plugin is shown as failed', async () => {
    const r = await open();
    act(() => useNavigation.setState({ detailTab: 'trace' }));
    await r.user.click(await screen.findByTestId('cni-check-run'));
    const result = await screen.findByTestId('cni-check-result');
    expect(result.dataset.ok).toBe('true');
    expect(result.textContent).toMatch(/CHECK at \d\d:\d\d:\d\d/);
    expect((await r.engine.status(r.id)).trace.filter((t) => t.plugin?.verb === 'CHECK').length).toBeGreaterThan(0);
    const net = r.fakes.cni.networks.find((n) => n.ifName === 'eth0')!;
    r.fakes.cni.failures.push({ verb: 'CHECK', network: net.name, index: 0, message: 'Expected IP 10.88.0.2 not found' });
    await r.user.click(screen.getByTestId('cni-check-run'));
    await waitFor(() => expect(screen.getByTestId('cni-check-result').dataset.ok).toBe('false'));
    expect(screen.getByTestId('cni-check-result').textContent).toContain('Expected IP 10.88.0.2 not found');
  });
});
