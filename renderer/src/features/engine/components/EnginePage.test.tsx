// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, screen, within } from '@testing-library/react';
import { renderWithEngine } from '../../../test/render-with-engine';
import { EnginePage } from './EnginePage';

afterEach(cleanup);

describe('EnginePage start-up garbage collection', () => {
  it('lists what start-up collected, one row per item, with failures marked', async () => {
    const { engine, queryClient } = await renderWithEngine(<EnginePage />);
    const base = await engine.info();
    engine.info = async () => ({
      ...base,
      stateDirId: '0123456789abcdef0123456789abcdef',
      startupGc: [
        {
          kind: 'cni-cache-temp',
          path: '/var/lib/cni/results/net-abc-eth0.tmp-42-0a0b0c0d',
          action: 'deleted (a cache write interrupted before its rename)',
          at: '2026-11-23T14:00:00.000Z',
        },
        {
          kind: 'runc-container',
          id: 'f'.repeat(64),
          action: 'kill and delete',
          error: 'runc kill failed: exit code 1',
          at: '2026-11-23T14:00:00.000Z',
        },
      ],
    });
    await queryClient.resetQueries();
    const table = await screen.findByTestId('startup-gc');
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(rows[0]!.textContent).toContain('CNI cache temp file');
    expect(rows[0]!.textContent).toContain('net-abc-eth0.tmp-42-0a0b0c0d');
    expect(rows[1]!.textContent).toContain('runc container');
    expect(rows[1]!.textContent).toContain('kill and delete failed: runc kill failed: exit code 1');
    expect(screen.getByText('0123456789abcdef0123456789abcdef')).toBeTruthy();
  });

  it('says so when start-up collected nothing', async () => {
    const { engine, queryClient } = await renderWithEngine(<EnginePage />);
    const base = await engine.info();
    engine.info = async () => ({ ...base, startupGc: [] });
    await queryClient.resetQueries();
    expect((await screen.findByTestId('startup-gc-empty')).textContent).toContain('collected nothing');
  });
});

describe('EnginePage: where files go', () => {
  it("names the pod log directory rule and each loaded network's host-local store, read from the engine's conf dir", async () => {
    const { engine } = await renderWithEngine(<EnginePage />);
    // the fake engine loads the conf dir's bridge network, whose ipam is host-local without a dataDir
    const info = await engine.info();
    expect(info.hostLocalDirs?.length).toBeGreaterThan(0);
    const first = info.hostLocalDirs![0]!;
    expect(await screen.findByText(`host-local (${first.network})`)).toBeTruthy();
    expect(screen.getByText(new RegExp(`^${first.dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`)).textContent).toMatch(
      first.defaulted ? /default dataDir: the state dir does not move it/ : /ipam\.dataDir/,
    );
    expect(screen.getByText(/kubelet's: \/var\/log\/pods\/<namespace>_<name>_<uid>/)).toBeTruthy();
  });
});
