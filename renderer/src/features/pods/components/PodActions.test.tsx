// @vitest-environment jsdom
/** The remove dialog says what it will kill: the running containers, counted and named. */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { useState } from 'react';
import { renderWithEngine } from '../../../test/render-with-engine';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import { PodActions } from './PodActions';

afterEach(cleanup);

const shown: { set?: (p: SandboxSummary[]) => void } = {};
function Actions() {
  const [pods, set] = useState<SandboxSummary[]>([]);
  shown.set = set;
  return pods.length ? <PodActions pods={pods} compact /> : null;
}

describe('remove dialog', () => {
  it('counts and names the running containers it will kill (a stopped one is not counted)', async () => {
    const r = await renderWithEngine(<Actions />);
    await r.fakes.loadImage('podscope.test/busybox:1', { config: { Cmd: ['sh'] } });
    const { id: podId } = await r.engine.run({ config: { metadata: { name: 'web', namespace: 'default', uid: 'u' } } });
    const make = async (name: string, start: boolean) => {
      const { id } = await r.engine.createContainer({
        podSandboxId: podId,
        config: { metadata: { name }, image: { image: 'podscope.test/busybox:1' }, command: ['sleep', 'inf'] },
      });
      if (start) await r.engine.startContainer(id);
    };
    await make('httpd', true);
    await make('sidecar', true);
    await make('job', false);
    shown.set!([(await r.engine.list()).find((p) => p.id === podId)!]);
    fireEvent.click(await screen.findByRole('button', { name: 'Remove' }));
    const dialog = await screen.findByRole('dialog', { name: 'Remove default/web?' });
    await waitFor(() => expect(within(dialog).getByTestId('confirm-running').textContent).toMatch(/^Kills 2 running containers: /));
    const text = within(dialog).getByTestId('confirm-running').textContent!;
    expect(text).toContain('httpd');
    expect(text).toContain('sidecar');
    expect(text).not.toContain('job');
  });
});
