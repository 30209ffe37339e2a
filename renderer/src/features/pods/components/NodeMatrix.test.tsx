// @vitest-environment jsdom
/**
 * The reachability matrix of the listed nodes: it asks for the measured nodes only (the built-in engine is named as
 * left out), shows each cell's verdict and its measured time as the reply gives them, groups rows and columns by node,
 * and a failed cell opens its path — the reply's why (the node and its missing route) and, traced, the steps through
 * both nodes with the deciding rule. The reply is a fixed one here (the real run is in the e2e over kind-shaped nodes).
 */
import { cleanup, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCAL_ENDPOINT_CAPABILITIES, type EndpointView } from '../../../../../shared/domain/endpoints';
import type { ProbeMatrix } from '../../../../../shared/domain/nodes';
import { createClient } from '../../../../../shared/ipc/client';
import { ConnectionProvider } from '../../../lib/connection-context';
import { NodeMatrix } from './NodeMatrix';
import { nodeColumnWidth } from './PodsTable';

const cri = (id: string, label: string): EndpointView => ({
  id,
  kind: 'cri',
  label,
  connected: true,
  capabilities: { ...LOCAL_ENDPOINT_CAPABILITIES, pluginTrace: false, lab: false, preview: false },
});
const views = new Map<string, EndpointView>([
  ['local', { id: 'local', kind: 'podscope-engine', label: 'This machine', connected: true, capabilities: LOCAL_ENDPOINT_CAPABILITIES }],
  ['cri-1', cri('cri-1', 'node-a')],
  ['cri-2', cri('cri-2', 'node-b')],
]);

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const matrix: ProbeMatrix = {
  measuredAt: '2026-11-28T01:00:00.000Z',
  durationMs: 1400,
  nodes: ['node-a', 'node-b'],
  pods: [
    { id: A, name: 'x/web-a', node: 'node-a', ip: '10.1.0.2' },
    { id: B, name: 'x/web-b', node: 'node-b', ip: '10.1.1.2' },
  ],
  cells: [
    { from: A, to: B, fromNode: 'node-a', toNode: 'node-b', verdict: 'reachable', rttMs: 0.37, note: 'answered' },
    {
      from: B,
      to: A,
      fromNode: 'node-b',
      toNode: 'node-a',
      verdict: 'timeout',
      note: 'no answer in 1500 ms',
      why: 'node node-b has no route to 10.1.0.0/24 (pods of node-a); its kernel takes default via 10.9.0.1',
      trace: {
        flow: { sport: 40001, dst: '10.1.0.2', dport: 33000 },
        missing: [],
        steps: [
          {
            kind: 'route',
            netns: 'node:node-b',
            node: 'node-b',
            family: 4,
            rule: 'default via 10.9.0.1',
            verdict: 'missing',
            detail: 'no route to 10.1.0.0/24: default via 10.9.0.1',
            decisive: true,
          },
        ],
      },
    },
  ],
  errors: [],
  traced: true,
};

function renderMatrix(readyNow?: ReadonlySet<string>) {
  const asked: unknown[] = [];
  const client = createClient({
    kind: 'memory',
    invoke: async (channel, payload) => {
      asked.push([channel, payload]);
      return { ok: true, result: matrix };
    },
    onEvent: () => () => undefined,
  });
  render(
    <ConnectionProvider value={{ client, environment: { chromiumSandbox: true, runningAsRoot: false, mode: 'browser' } }}>
      <QueryClientProvider client={new QueryClient()}>
        <NodeMatrix nodeIds={['local', 'cri-1', 'cri-2']} views={views} readyNow={readyNow} onClose={() => undefined} />
      </QueryClientProvider>
    </ConnectionProvider>,
  );
  return asked;
}

describe('the reachability matrix', () => {
  afterEach(cleanup);

  it("measures the listed CRI nodes, shows each cell's verdict and time, and a failed cell opens its why and trace", async () => {
    const asked = renderMatrix();
    expect(screen.getByTestId('matrix-left-out').textContent).toContain('This machine');
    await userEvent.click(screen.getByRole('checkbox', { name: /trace every path/ }));
    await userEvent.click(screen.getByRole('button', { name: 'Measure' }));
    const grid = await screen.findByTestId('matrix-grid');
    expect(asked).toEqual([['nodes.matrix', { endpointIds: ['cri-1', 'cri-2'], trace: true }]]);
    // grouped by node: each node's name heads its columns and its rows
    expect(within(grid).getAllByRole('columnheader', { name: 'node-a' })).toHaveLength(1);
    expect(within(grid).getAllByRole('rowheader', { name: 'node-b' })).toHaveLength(1);
    expect(screen.getByTestId('matrix-summary').textContent).toContain('1 of 2 failed');
    // the time is the reply's, never made up for a cell that did not connect
    const rowA = screen.getAllByTestId('matrix-row').find((r) => r.dataset.pod === 'x/web-a')!;
    expect(within(rowA).getByRole('button', { name: 'to x/web-b: reachable in 0.37 ms' })).toBeTruthy();
    const rowB = screen.getAllByTestId('matrix-row').find((r) => r.dataset.pod === 'x/web-b')!;
    const failed = within(rowB).getByRole('button', { name: 'to x/web-a: timed out' });
    expect(failed.textContent).not.toMatch(/ms/);
    await userEvent.click(failed);
    const path = screen.getByTestId('matrix-path');
    expect(path.textContent).toContain('x/web-b on node-b → x/web-a on node-a');
    expect(within(path).getByTestId('trace-why').textContent).toContain('node node-b has no route to 10.1.0.0/24');
    expect(path.textContent).toContain('default via 10.9.0.1');
    // the step says which node's kernel decided it
    expect(path.querySelector('[data-decisive="true"]')?.textContent).toContain('node node-b');
  });
});

describe('the matrix after a pod stopped', () => {
  afterEach(cleanup);

  it('a cell of a pod no longer ready is grey, not a green ✓, and the summary is no verdict', async () => {
    const allReachable: ProbeMatrix = { ...matrix, cells: [matrix.cells[0]!] };
    const client = createClient({
      kind: 'memory',
      invoke: async () => ({ ok: true, result: allReachable }),
      onEvent: () => () => undefined,
    });
    // web-b was stopped after the run: only web-a is ready in the live list
    render(
      <ConnectionProvider value={{ client, environment: { chromiumSandbox: true, runningAsRoot: false, mode: 'browser' } }}>
        <QueryClientProvider client={new QueryClient()}>
          <NodeMatrix nodeIds={['cri-1', 'cri-2']} views={views} readyNow={new Set([A])} onClose={() => undefined} />
        </QueryClientProvider>
      </ConnectionProvider>,
    );
    await userEvent.click(screen.getByRole('button', { name: 'Measure' }));
    await screen.findByTestId('matrix-grid');
    const rowA = screen.getAllByTestId('matrix-row').find((r) => r.dataset.pod === 'x/web-a')!;
    const cell = within(rowA).getByRole('button', { name: 'to x/web-b: reachable in 0.37 ms (a pod not ready now)' });
    expect(cell.textContent).toBe('not ready now');
    expect(cell.className).not.toContain('node-matrix-ok');
    const summary = screen.getByTestId('matrix-summary');
    expect(summary.textContent).not.toContain('all 1 reachable');
    expect(summary.textContent).toContain('1 of a pod not ready now');
  });
});

describe("the Node column's width", () => {
  it('fits the longest node name listed, never narrower than its header', () => {
    expect(nodeColumnWidth(['This machine (built-in engine)', 'kind-worker'])).toBeGreaterThan(nodeColumnWidth(['kind-worker']));
    expect(nodeColumnWidth(['a'])).toBe(96);
  });
});
