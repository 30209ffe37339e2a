// @vitest-environment jsdom
/**
 * The "Add a node" dialog lists the nodes discovery found, with their runtime, own namespaces, addresses and pod
 * subnets, and one click asks to add that node's endpoint under its name.
 */
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { NodeView } from '../../../../../shared/domain/nodes';
import { renderWithEngine } from '../../../test/render-with-engine';
import { AddEndpointDialog } from './EndpointSwitcher';

const ns = (id: string, host: boolean) => ({ id, host });
const kindWorker: NodeView = {
  name: 'kind-worker',
  nameFrom: 'uts-hostname',
  endpoint: '/proc/4242/root/run/containerd/containerd.sock',
  socketPath: '/run/containerd/containerd.sock',
  foundBy: 'process',
  runtimeName: 'containerd',
  runtimeVersion: '1.7.1',
  runtimeApiVersion: 'v1',
  pid: 4242,
  namespaces: { net: ns('net:[9]', false), mnt: ns('mnt:[9]', false), pid: ns('pid:[1]', true), uts: ns('uts:[9]', false) },
  addresses: [{ ifName: 'eth0', cidr: '172.18.0.3/16' }],
  podSubnets: [{ cidr: '10.244.1.0/24', source: 'cni-config', from: 'kindnet' }],
  routes: [],
  problems: [],
};

describe('Add a node', () => {
  afterEach(cleanup);

  it('lists the discovered nodes and adds one with one click', async () => {
    const { calls } = await renderWithEngine(<AddEndpointDialog open onClose={() => undefined} />, {
      discoverNodes: async () => ({ nodes: [kindWorker], refused: [] }),
    });
    const row = await screen.findByTestId('discovered-node');
    expect(row.textContent).toContain('kind-worker');
    expect(row.textContent).toContain('containerd 1.7.1 · own net, mnt, uts · 172.18.0.3/16 · pods 10.244.1.0/24');
    expect(row.textContent).toContain(kindWorker.endpoint);
    await userEvent.click(within(row).getByRole('button', { name: 'Add' }));
    // the endpoint is no socket here: the add was tried on that very path and its refusal is shown
    expect(await screen.findByText('Could not add the node')).toBeTruthy();
    expect(screen.getByRole('alert').textContent).toContain(kindWorker.endpoint);
    await waitFor(() => expect(calls).toContain('endpoints.add'));
  });

  it("checks the libcni results dir as it is typed: a wrong one is named in the field's note and nothing can be added", async () => {
    await renderWithEngine(<AddEndpointDialog open onClose={() => undefined} />);
    const field = screen.getByLabelText('libcni results dir') as HTMLInputElement;
    expect(field.value).toBe('/var/lib/cni/results');
    expect(screen.getByRole('button', { name: 'Connect' }).hasAttribute('disabled')).toBe(false);
    await userEvent.clear(field);
    await userEvent.type(field, '/var/lib/cni');
    expect(screen.getByTestId('cni-results-dir-note').textContent).toMatch(/^libcni results dir: must be libcni's results directory/);
    expect(field.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByRole('button', { name: 'Connect' }).hasAttribute('disabled')).toBe(true);
    await userEvent.type(field, '/results');
    expect(screen.getByRole('button', { name: 'Connect' }).hasAttribute('disabled')).toBe(false);
  });

  it('says so when no runtime is found', async () => {
    await renderWithEngine(<AddEndpointDialog open onClose={() => undefined} />);
    expect(await screen.findByText(/No CRI runtime found/)).toBeTruthy();
  });
});
