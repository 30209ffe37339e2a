// @vitest-environment jsdom
/**
 * A pods-list row: the host-ports cell, cut by its column, has the whole list as its tooltip; the network column says
 * n/a where the endpoint's pods cannot be probed, and a stopped pod gets no verdict (never green).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { pod } from '../../../test/pod-summary';
import { ConnectionProvider } from '../../../lib/connection-context';
import type { PodscopeClient } from '../../../../../shared/ipc/client';
import { PodRow } from './PodRow';

afterEach(cleanup);

const row = (p: ReturnType<typeof pod>, probeable: boolean) =>
  render(
    // a pod that cannot be probed asks nothing: a client that would throw proves it
    <ConnectionProvider
      value={{ client: {} as PodscopeClient, environment: { chromiumSandbox: true, runningAsRoot: false, mode: 'browser' } }}
    >
      <QueryClientProvider client={new QueryClient()}>
        <PodRow
          pod={p}
          rowIndex={2}
          top={0}
          selected={false}
          checked={false}
          onToggle={() => {}}
          onSelect={() => {}}
          onOpen={() => {}}
          clash={false}
          containers={[1, 1]}
          hostPortsListed
          probeable={probeable}
          now={Date.now()}
        />
      </QueryClientProvider>
    </ConnectionProvider>,
  );

const ports = [8080, 8081, 8082, 8443].map((h, i) => ({ hostPort: h, containerPort: 80 + i, protocol: 'tcp' }));

describe('pods list row', () => {
  it('gives the host-ports cell the whole list as its tooltip', () => {
    const { container } = row(pod('web', 'default', { hostPorts: ports }), false);
    const cell = container.querySelector('[data-col="host-ports"]')!;
    expect(cell.getAttribute('title')).toBe('8080→80/tcp, 8081→81/tcp, 8082→82/tcp, 8443→83/tcp');
  });

  it('says n/a in the network column where the pods cannot be probed from here', () => {
    const { container } = row(pod('web', 'default'), false);
    expect(container.querySelector('[data-col="network"]')!.textContent).toBe('n/a');
  });
});
