// @vitest-environment jsdom
/**
 * The app never polls the built-in engine: rendered whole against the real router and engine (over the touch-point
 * fakes), it makes no request at all while idle for longer than any former poll period (3 s), and a pod the engine
 * creates appears from the pushed event, without the list being fetched again. Fails if any refetchInterval (or
 * other timer-driven request) comes back on the local endpoint.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { act, cleanup, screen } from '@testing-library/react';
import { renderWithEngine } from '../test/render-with-engine';
import { App } from './App';

afterEach(() => cleanup());

describe('no polling of the local engine', () => {
  it('is silent for 5 s idle, and shows a new pod from its event without listing again', { timeout: 30_000 }, async () => {
    const { engine, calls } = await renderWithEngine(<App />);
    await screen.findByText('No pod sandboxes yet');
    // let the first fetches (and anything they trigger) finish
    await act(() => new Promise((r) => setTimeout(r, 500)));
    const idleFrom = calls.length;
    await act(() => new Promise((r) => setTimeout(r, 5000)));
    expect(calls.slice(idleFrom)).toEqual([]);

    await act(() => engine.run({ config: { metadata: { name: 'pushed', namespace: 'default', uid: 'u-pushed' } } }));
    // the toolbar counts the pushed row (jsdom lays out no rows for the virtualized grid)
    expect(await screen.findByText('1 sandbox')).toBeTruthy();
    expect(calls.slice(idleFrom).filter((c) => c === 'sandbox.list' || c === 'containers.list')).toEqual([]);
  });
});
