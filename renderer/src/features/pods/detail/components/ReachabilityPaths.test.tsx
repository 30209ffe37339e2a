// @vitest-environment jsdom
/**
 * The Reachability table grouped by network: a heading per attachment (network · interface, its chain, link kind and
 * parent) with that network's paths under it in the report's order; an isolated path shows its own pill (neither
 * green nor red) and the rule of the plugin's design; a path that could not be measured says why.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, within } from '@testing-library/react';
import type { ProbePath, ProbeReport } from '../../../../../../shared/domain/probe';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { ReachabilityPaths } from './ReachabilityPaths';

afterEach(cleanup);

const ID = 'a'.repeat(64);
const s = { id: ID, state: 'SANDBOX_READY', metadata: { name: 'web', namespace: 'default' } } as unknown as SandboxStatus;
const path = (over: Partial<ProbePath>): ProbePath => ({
  kind: 'gateway',
  from: 'pod',
  to: '10.70.0.1:4000',
  proto: 'tcp',
  verdict: 'reachable',
  measured: true,
  note: 'nonce matched',
  network: 'psmn-br',
  interface: 'eth0',
  ...over,
});
const RULE = "macvlan: a macvlan child cannot reach its parent link's own addresses (10.71.0.1 is on pmnpar)";
const report: ProbeReport = {
  sandboxId: ID,
  measuredAt: '2026-11-25T23:00:00Z',
  measuredBy: 'TCP connect',
  durationMs: 1500,
  trigger: 'onDemand',
  errors: [],
  networks: [
    { network: 'psmn-br', interface: 'eth0', plugins: ['bridge', 'portmap'] },
    {
      network: 'psmn-mac',
      interface: 'eth1',
      plugins: ['macvlan'],
      linkKind: 'macvlan',
      parent: 'pmnpar',
      peers: { ready: 6, measured: 4 },
    },
  ],
  paths: [
    path({ kind: 'hostPort', from: 'host', to: '127.0.0.1:8080', mappingIndex: 0 }),
    path({
      to: '10.71.0.1:4001',
      network: 'psmn-mac',
      interface: 'eth1',
      verdict: 'isolated',
      note: 'no answer to the SYN in time',
      why: RULE,
    }),
    path({ network: 'psmn-mac', interface: 'eth1', kind: 'peer', to: '10.71.0.11:4002' }),
    path({ to: '10.70.0.1', verdict: 'timeout', measured: false, note: 'not measured: EADDRINUSE' }),
  ],
};
const actions = { canExplain: true, open: null, tracing: false, busy: false, explain: () => undefined };

describe('Reachability paths grouped by network', () => {
  it('one group per attachment in order, each heading with its chain and link, each path under its own network', () => {
    render(<ReachabilityPaths s={s} report={report} actions={actions} />);
    const groups = screen.getAllByTestId('reach-network');
    expect(groups.map((g) => [g.dataset.network, g.dataset.interface])).toEqual([
      ['psmn-br', 'eth0'],
      ['psmn-mac', 'eth1'],
    ]);
    const [eth0, eth1] = groups as [HTMLElement, HTMLElement];
    expect(within(eth0).getByTestId('reach-network-heading').textContent).toContain('psmn-br · eth0 — bridge → portmap');
    expect(within(eth1).getByTestId('reach-network-heading').textContent).toContain('psmn-mac · eth1 — macvlan · parent pmnpar');
    expect(within(eth1).getByTestId('reach-peers').textContent).toContain('peers: newest 4 of 6');
    expect(
      within(eth0)
        .getAllByRole('row')
        .filter((r) => r.dataset.kind)
        .map((r) => r.dataset.kind),
    ).toEqual(['hostPort', 'gateway']);
    expect(
      within(eth1)
        .getAllByRole('row')
        .filter((r) => r.dataset.kind)
        .map((r) => r.dataset.verdict),
    ).toEqual(['isolated', 'reachable']);
  });

  it('an isolated path has its own pill (not green, not red) and names the rule; an unmeasured one says why', () => {
    render(<ReachabilityPaths s={s} report={report} actions={actions} />);
    const row = document.querySelector<HTMLElement>('tr[data-verdict="isolated"]')!;
    const pill = row.querySelector('.pill')!;
    expect(pill.textContent).toBe('isolated by design');
    expect(pill.className).toContain('pill-info');
    expect(pill.className).not.toMatch(/pill-(ok|bad)/);
    expect(within(row).getByTestId('reach-design-rule').textContent).toBe(`Expected: ${RULE}`);
    const unmeasured = document.querySelector<HTMLElement>('tr[data-measured="false"]')!;
    expect(within(unmeasured).getByTestId('reach-derived').textContent).toBe('not measured');
    expect(unmeasured.textContent).toContain('not measured: EADDRINUSE');
  });

  it('a DNS group after the networks: a row per nameserver (the silent one red), the pod resolv.conf beside it', () => {
    const conf = 'search name.test\nnameserver 10.70.0.1\nnameserver 10.70.0.250\n';
    const withDns: ProbeReport = {
      ...report,
      dns: {
        source: 'dns_config',
        servers: ['10.70.0.1', '10.70.0.250'],
        searches: ['name.test'],
        options: [],
        resolvConf: conf,
        name: 'name.test',
        qtype: 'A',
      },
      paths: [
        ...report.paths,
        path({ kind: 'dns', to: '10.70.0.1:53', proto: 'udp', note: 'NOERROR: A 10.0.0.9 (over UDP)', rttMs: 0.4 }),
        path({ kind: 'dns', to: '10.70.0.250:53', proto: 'udp', verdict: 'timeout', note: 'no answer to A name.test in 1500 ms' }),
      ],
    };
    render(<ReachabilityPaths s={s} report={withDns} actions={actions} />);
    // the networks keep only their own paths
    expect(screen.getAllByTestId('reach-network')).toHaveLength(2);
    const dns = screen.getByTestId('reach-dns');
    expect(within(dns).getByTestId('reach-network-heading').textContent).toContain(
      "DNS — nameservers from the pod's dns_config · asks A name.test",
    );
    const rows = within(dns)
      .getAllByRole('row')
      .filter((r) => r.dataset.kind === 'dns');
    expect(rows.map((r) => r.dataset.verdict)).toEqual(['reachable', 'timeout']);
    expect(rows[1]!.querySelector('.pill')!.className).toContain('pill-bad');
    expect(rows[0]!.textContent).toContain('A 10.0.0.9');
    expect(within(dns).getByTestId('reach-resolv-conf').textContent).toBe(conf);
  });

  it("between pods, the network path and a declared port's path are labelled apart, the port with where it is declared", () => {
    const withPorts: ProbeReport = {
      ...report,
      paths: [
        path({ kind: 'peer', to: '10.70.0.3:41234', from: 'pod' }),
        path({
          kind: 'peerPort',
          to: '10.70.0.3:80',
          from: 'pod',
          verdict: 'timeout',
          note: 'no answer to the SYN in time',
          declaredBy: 'port mapping 0, container web (EXPOSE 80/tcp)',
        }),
      ],
    };
    render(<ReachabilityPaths s={s} report={withPorts} actions={actions} />);
    const [net, port] = screen.getAllByRole('row').filter((r) => r.dataset.kind) as [HTMLElement, HTMLElement];
    expect(net.textContent).toContain('peer · network');
    expect(net.querySelector('[data-testid="reach-declared-by"]')).toBeNull();
    expect(port.dataset.kind).toBe('peerPort');
    expect(port.textContent).toContain('peer · port');
    expect(within(port).getByTestId('reach-declared-by').textContent).toBe('declared by port mapping 0, container web (EXPOSE 80/tcp)');
    expect(port.querySelector('.pill')!.className).toContain('pill-bad');
  });
});

describe("a network group's heading", () => {
  it('counts a path that connects but loses full-size packets as an MTU black hole, not as reachable', () => {
    const holed: ProbeReport = {
      ...report,
      paths: [
        path({ kind: 'hostPort', from: 'host', to: '127.0.0.1:8080', mappingIndex: 0 }),
        path({
          mtu: {
            pathMtu: 1400,
            interfaceMtu: 1500,
            blackHole: true,
            at: { node: 'host', netns: 'host', interface: 'vethab12', mtu: 1400 },
            probes: 5,
            note: '',
          },
        }),
      ],
    };
    render(<ReachabilityPaths s={s} report={holed} actions={actions} />);
    const eth0 = screen.getAllByTestId('reach-network')[0]!;
    const heading = within(eth0).getByTestId('reach-network-heading').textContent;
    expect(heading).toContain('1 reachable');
    expect(heading).toContain('1 MTU black hole');
    expect(heading).not.toContain('2 reachable');
  });
});
