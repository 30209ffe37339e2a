// @vitest-environment jsdom
/** The CNI trace tab's badge counts the rows the tab shows: plugin execs, and of those the failed ones. */
import { useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { act, cleanup, screen, waitFor } from '@testing-library/react';
import { renderWithEngine } from '../../../../test/render-with-engine';
import { useNavigation } from '../../../../lib/navigation';
import type { SandboxSummary } from '../../../../../../shared/domain/sandbox';
import { PodDetail } from './PodDetail';

afterEach(() => {
  cleanup();
  useNavigation.setState({ detailTab: 'overview', selectedId: undefined });
});

const shown: { set?: (s: SandboxSummary) => void } = {};
function Detail() {
  const [summary, set] = useState<SandboxSummary>();
  shown.set = set;
  return summary ? <PodDetail summary={summary} /> : null;
}

describe('CNI trace badge', () => {
  it('says "1 failed" over one failed plugin row (a failed CHECK also records a failed network step, which is no row)', async () => {
    const r = await renderWithEngine(<Detail />);
    const { id } = await r.engine.run({ config: { metadata: { name: 'web', namespace: 'default', uid: 'u1', attempt: 0 } } });
    r.fakes.cni.failures.push({ verb: 'CHECK', network: 'containerd-net', index: 0, message: 'bridge is gone', once: true });
    await r.client.call('sandbox.cniCheck', { endpointId: 'local', id }).catch(() => undefined);
    const failed = (await r.engine.status(id)).trace.filter((t) => !t.ok);
    // the situation reported: more failed trace entries than failed plugin rows
    expect(failed.filter((t) => t.plugin)).toHaveLength(1);
    expect(failed.length).toBeGreaterThan(1);
    const summary = (await r.engine.list()).find((p) => p.id === id)!;
    act(() => useNavigation.setState({ detailTab: 'trace', selectedId: id }));
    act(() => shown.set!(summary));
    const rows = await screen.findByTestId('cni-trace');
    await waitFor(() => expect(rows.querySelectorAll('li.tl-fail')).toHaveLength(1));
    const badge = screen.getByRole('tab', { name: /CNI trace/ }).querySelector('.tab-badge')!;
    expect(badge.textContent).toBe(`${rows.querySelectorAll('li').length} · 1 failed`);
  });
});
