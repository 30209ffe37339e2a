// @vitest-environment jsdom
/**
 * The pod's containers are visible in the pod detail (state, image, exit code and reason), from the real engine's CreateContainer/StartContainer over the touch-point fakes; the
 * engine's container events keep both current.
 */
import { useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { act, cleanup, screen, waitFor, within } from '@testing-library/react';
import { renderWithEngine } from '../../../test/render-with-engine';
import { useEngineEvents } from '../../../app/engine-events';
import { useNavigation } from '../../../lib/navigation';
import { PodsPage } from './PodsPage';

afterEach(() => {
  cleanup();
  useNavigation.setState({ detailTab: 'overview', selectedId: undefined });
});

const gate = { open: () => {} };

/** The table mounts once the pod exists (the virtualized grid measures its rows on mount in jsdom). */
function Live() {
  const [on, setOn] = useState(false);
  gate.open = () => setOn(true);
  useEngineEvents();
  return on ? <PodsPage /> : null;
}

describe('containers in the pods view', () => {
  it('lists the pod containers with their state, image and exit reason, kept current by container events', async () => {
    const { engine, fakes } = await renderWithEngine(<Live />);
    await fakes.loadImage('podscope.test/busybox:1');
    const image = { image: 'podscope.test/busybox:1' };
    const { id: podId } = await act(() =>
      engine.run({ config: { metadata: { name: 'web', namespace: 'default', uid: 'u' }, hostname: 'web' } }),
    );
    act(() => useNavigation.setState({ selectedId: podId, detailTab: 'overview' }));
    act(() => gate.open());
    await screen.findByText('No containers in this pod.');

    await act(async () => {
      const a = await engine.createContainer({ podSandboxId: podId, config: { metadata: { name: 'httpd' }, image, command: ['httpd'] } });
      const b = await engine.createContainer({ podSandboxId: podId, config: { metadata: { name: 'job' }, image, command: ['false'] } });
      await engine.startContainer(a.id);
      await engine.startContainer(b.id);
      fakes.containerRuntime.exit(b.id, 3);
      await engine.listContainers(); // the engine notices the exit and announces it
    });
    await screen.findByText('Containers (2)');
    const table = await screen.findByRole('table', { name: 'Containers' });
    await waitFor(() => expect(within(table).getByText('job').closest('tr')!.textContent).toContain('exit 3 · Error'));
    expect(within(table).getByText('job').closest('tr')!.textContent).toContain('exited');
    expect(within(table).getByText('httpd').closest('tr')!.textContent).toContain('running');
    expect(within(table).getByText('httpd').closest('tr')!.textContent).toContain('podscope.test/busybox:1');
  });
});
