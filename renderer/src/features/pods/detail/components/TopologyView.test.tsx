// @vitest-environment jsdom
/**
 * The topology panel shows a kernel reading only while the pod is ready: after a stop, the reading cached from before
 * must not stay on screen with its "read from the kernel at" time next to "nothing is wired to draw".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { act, cleanup, screen, waitFor } from '@testing-library/react';
import { useState } from 'react';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { renderWithEngine } from '../../../../test/render-with-engine';
import { TopologyView } from './TopologyView';

afterEach(cleanup);

/** the detail passes a fresh status on every change; this holds it in state so the providers stay mounted */
let showStatus: (s: SandboxStatus) => void = () => {};
function Harness() {
  const [s, setS] = useState<SandboxStatus | null>(null);
  showStatus = setS;
  return s && <TopologyView s={s} />;
}

describe('TopologyView', () => {
  it('drops the kernel reading and its time once the pod is stopped', async () => {
    const { engine } = await renderWithEngine(<Harness />);
    const { id } = await engine.run({ config: { metadata: { name: 'web', namespace: 'default', uid: 'u1', attempt: 0 } } });
    const ready = await engine.status(id);
    act(() => showStatus(ready));
    await waitFor(() => expect(screen.getByTestId('topo-measured-at').textContent).toContain('read from the kernel at'));

    await engine.stop(id);
    const stopped = await engine.status(id);
    expect(stopped.state).toBe('SANDBOX_NOTREADY');
    act(() => showStatus(stopped));
    expect(screen.getByTestId('topo-not-ready')).toBeTruthy();
    expect(screen.queryByTestId('topo-measured-at')).toBeNull();
  });
});
