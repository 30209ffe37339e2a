// @vitest-environment jsdom
/** ↑/↓ move through the pods list as soon as it shows, without a click into it first. */
import { useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { renderWithEngine } from '../../../test/render-with-engine';
import { useNavigation } from '../../../lib/navigation';
import { PodsPage } from './PodsPage';

afterEach(() => {
  cleanup();
  useNavigation.setState({ detailTab: 'overview', selectedId: undefined });
});

const gate = { open: () => {} };
function Gated() {
  const [on, setOn] = useState(false);
  gate.open = () => setOn(true);
  return on ? <PodsPage /> : null;
}

describe('pods list keyboard', () => {
  it('takes the focus when it appears, so ArrowDown selects the first pod at once', async () => {
    const { engine } = await renderWithEngine(<Gated />);
    const { id } = await engine.run({ config: { metadata: { name: 'web', namespace: 'default', uid: 'u1' } } });
    act(() => gate.open());
    const body = await screen.findByTestId('pods-grid-body');
    await waitFor(() => expect(document.activeElement).toBe(body));
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowDown' });
    await waitFor(() => expect(useNavigation.getState().selectedId).toBe(id));
  });
});
