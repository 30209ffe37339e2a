// @vitest-environment jsdom
/**
 * "What the kernel says now" in the detail tabs, against the real router and the real engine over the touch-point
 * fakes (the engine's kernel reader reads what the fake plugins set up from the fake kernel's `ip`/`tc`/`iptables-save`
 * output; `tamper` edits that kernel so it disagrees): the bandwidth
 * verdicts (applied / mismatch / not shaped), the calm note for a stopped pod, the "not available" path, and the
 * live DNAT rules and address diff.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { act, cleanup, screen, waitFor, within } from '@testing-library/react';
import { useQuery } from '@tanstack/react-query';
import userEvent from '@testing-library/user-event';
import { renderWithEngine } from '../../../../test/render-with-engine';
import { useNavigation, type DetailTab } from '../../../../lib/navigation';
import { useEngineEvents } from '../../../../app/engine-events';
import { useClient } from '../../../../lib/connection-context';
import { podStatusQuery } from '../api/queries';
import type { FakeKernel } from '../../../../../../testkit/fakes/fake-kernel';
import type { SandboxStatus } from '../../../../../../shared/domain/sandbox';
import { PodDetail } from './PodDetail';

afterEach(() => {
  cleanup();
  useNavigation.setState({ detailTab: 'overview', selectedId: undefined });
});

const BW = { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '512k' };
const PORTS = [
  { protocol: 'TCP' as const, container_port: 80, host_port: 18080 },
  { protocol: 'UDP' as const, container_port: 5353, host_port: 0 },
];

/** The pods page in miniature: events keep the data current, the selected pod's detail is shown. */
function Selected() {
  useEngineEvents();
  const client = useClient();
  const id = useNavigation((s) => s.selectedId);
  // a status carries every summary field
  const { data } = useQuery({ ...podStatusQuery(client, 'local', id ?? ''), enabled: !!id });
  return data ? <PodDetail summary={data} /> : null;
}

/** The host-side device the CNI result names (the pod's veth end, or the bandwidth plugin's ifb). */
const hostDevice = (st: SandboxStatus, prefix: 'veth' | 'bwp') =>
  st.networks.flatMap((n) => n.result?.interfaces ?? []).find((i) => !i.sandbox && i.name.startsWith(prefix))!.name;

/**
 * Runs a pod on a fresh engine, then selects it with `tab` open. `tamper` edits the fake kernel (as someone on the
 * host would) before anything is read, so the engine's own reader and checks see the mismatch.
 */
async function open(
  tab: DetailTab,
  opts: {
    annotations?: Record<string, string>;
    tamper?: (kernel: FakeKernel, st: SandboxStatus) => void;
    capabilities?: { liveNetwork: boolean };
  } = {},
) {
  const r = await renderWithEngine(<Selected />, { capabilities: opts.capabilities });
  const { id } = await r.engine.run({
    config: {
      metadata: { name: 'web', namespace: 'default', uid: 'u1', attempt: 0 },
      annotations: opts.annotations ?? BW,
      port_mappings: PORTS,
    },
  });
  const st = await r.engine.status(id);
  opts.tamper?.(r.fakes.kernel, st);
  act(() => useNavigation.setState({ detailTab: tab, selectedId: id }));
  return { ...r, id, st, user: userEvent.setup() };
}

describe('Bandwidth tab: was the annotation applied?', () => {
  it('shows ✓ applied per direction with the tbf rate and its device', async () => {
    const { st } = await open('bandwidth');
    const ingress = await screen.findByTestId('bw-live-ingress');
    expect(ingress.dataset.verdict).toBe('applied');
    expect(within(ingress).getByTestId('bw-verdict-ingress').textContent).toContain('applied');
    expect(within(ingress).getByTestId('bw-applied-ingress').textContent).toContain('tbf 10 Mbit/s');
    expect(within(ingress).getByTestId('bw-applied-ingress').textContent).toContain(hostDevice(st, 'veth'));
    expect(ingress.textContent).toContain('ingress-bandwidth: "10M"');
    const egress = screen.getByTestId('bw-live-egress');
    expect(egress.dataset.verdict).toBe('applied');
    expect(within(egress).getByTestId('bw-applied-egress').textContent).toContain('tbf 512 kbit/s');
    expect(within(egress).getByTestId('bw-applied-egress').textContent).toContain(hostDevice(st, 'bwp'));
    // what the plugin received, from its recorded stdin
    expect(egress.textContent).toContain('512 kbit/s');
    expect(screen.getByTestId('bw-live-answer').textContent).toMatch(/configured in the kernel \(tc settings read, not measured/);
    expect(screen.getByTestId('live-collected-at').textContent).toMatch(/collected at/);
  });

  it('shows ✗ mismatch when the kernel has another rate', async () => {
    // the host veth's tbf runs at 1 Mbit/s (tc reports bytes per second)
    const { st } = await open('bandwidth', {
      tamper: (kernel, s) => void (kernel.host.get(hostDevice(s, 'veth'))!.tbf = { rate: 125_000, burst: 1000 }),
    });
    const ingress = await screen.findByTestId('bw-live-ingress');
    expect(ingress.dataset.verdict).toBe('mismatch');
    expect(within(ingress).getByTestId('bw-verdict-ingress').textContent).toContain('✗');
    expect(within(ingress).getByTestId('bw-verdict-ingress').textContent).toContain('mismatch');
    expect(within(ingress).getByTestId('bw-applied-ingress').textContent).toContain('tbf 1 Mbit/s');
    // the engine's own verdict, not a note the test wrote
    expect(ingress.textContent).toContain(`tbf at 1 Mbit/s on ${hostDevice(st, 'veth')}, but the annotation asks for 10 Mbit/s`);
    expect(screen.getByTestId('bw-live-egress').dataset.verdict).toBe('applied');
    expect(screen.getByTestId('bw-live-answer').textContent).toMatch(/^No — 1 of 2 directions/);
  });

  it('shows ✗ not shaped when an annotation has no tbf, and a neutral "not shaped" without annotation', async () => {
    await open('bandwidth', {
      annotations: { 'kubernetes.io/egress-bandwidth': '512k' },
      // someone replaced the ifb's tbf
      tamper: (kernel, s) => void (kernel.host.get(hostDevice(s, 'bwp'))!.tbf = undefined),
    });
    const egress = await screen.findByTestId('bw-live-egress');
    expect(egress.dataset.verdict).toBe('missing');
    expect(within(egress).getByTestId('bw-verdict-egress').textContent).toMatch(/✗\s*not shaped/);
    expect(within(egress).getByTestId('bw-applied-egress').textContent).toContain('no tbf');
    expect(egress.textContent).toContain("no tbf qdisc on the pod's ifb device");
    const ingress = screen.getByTestId('bw-live-ingress');
    expect(ingress.dataset.verdict).toBe('not-shaped');
    expect(within(ingress).getByTestId('bw-verdict-ingress').textContent).not.toContain('✗');
    expect(within(ingress).getByTestId('bw-verdict-ingress').textContent).toContain('not shaped');
    expect(screen.getByTestId('bw-live-answer').textContent).toMatch(/^No/);
  });

  it('re-reads on Refresh and, after stop (sandbox.changed), says calmly that the netns is gone', async () => {
    const { engine, id, st, calls, user } = await open('bandwidth');
    await screen.findByTestId('bw-live-ingress');
    const before = calls.filter((c) => c === 'sandbox.live').length;
    expect(before).toBe(1);
    await user.click(screen.getByRole('button', { name: /^Refresh Was it applied/ }));
    await waitFor(() => expect(calls.filter((c) => c === 'sandbox.live').length).toBe(2));
    await engine.stop(id);
    const note = await screen.findByTestId('live-absent');
    expect(note.textContent).toContain(`sandbox ${id} is stopped: its network namespace ${st.netnsPath} was removed`);
    expect(screen.getByTestId('live-bandwidth').dataset.liveState).toBe('absent');
    // a note, not an error box
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('says "not available from this runtime" and never calls sandbox.live without the capability', async () => {
    const { calls } = await open('bandwidth', { capabilities: { liveNetwork: false } });
    expect((await screen.findByTestId('live-unavailable')).textContent).toContain('Not available from this runtime');
    expect(screen.queryByRole('button', { name: /^Refresh/ })).toBeNull();
    expect(calls).not.toContain('sandbox.live');
  });
});

describe('Port mappings tab: live DNAT rules', () => {
  it('shows the DNAT rule of each family verbatim (the pod is dual-stack), and explains that a host_port 0 mapping expects none', async () => {
    await open('ports', {});
    const table = await screen.findByTestId('live-port-rows');
    const rows = table.querySelectorAll('tbody tr');
    expect(rows).toHaveLength(2);
    expect(rows[0]!.getAttribute('data-found')).toBe('true');
    const rules = within(rows[0] as HTMLElement)
      .getAllByTestId('dnat-rule')
      .map((r) => r.textContent);
    expect(rules).toHaveLength(2);
    expect(rules[0]).toMatch(/--dport 18080 -j DNAT --to-destination 10\.88\.0\.\d+:80$/);
    expect(rules[1]).toMatch(/--dport 18080 -j DNAT --to-destination \[2001:4860:4860::\w+\]:80$/);
    expect(rows[1]!.textContent).toContain('none expected');
    expect(rows[1]!.textContent).toContain('no DNAT rule is expected');
  });

  it('says "no DNAT rule found" when the rule is gone', async () => {
    // someone flushed the nat table
    await open('ports', { tamper: (kernel) => void (kernel.nat.v4.splice(0), kernel.nat.v6.splice(0)) });
    const table = await screen.findByTestId('live-port-rows');
    const first = table.querySelector('tbody tr') as HTMLElement;
    expect(first.dataset.found).toBe('false');
    expect(first.textContent).toContain('✗ no DNAT rule found');
  });
});

describe('Network tab: live in the netns', () => {
  it('marks addresses the CNI result listed but the kernel lacks, and the reverse', async () => {
    const { st } = await open('network', {
      // an address added by hand, the v6 one removed, and a link-local address that is not the MAC's EUI-64
      tamper: (kernel, s) => {
        const eth0 = kernel.podLinks(s.netnsPath!).find((l) => l.name === 'eth0')!;
        eth0.addresses = [...eth0.addresses.filter((a) => !a.includes(':')), '192.0.2.9/24'];
        eth0.linkLocal = 'fe80::1';
      },
    });
    const ifaces = await screen.findByTestId('live-interfaces');
    const eth0 = ifaces.querySelector('tr[data-iface="eth0"]') as HTMLElement;
    const mark = (addr: string) => eth0.querySelector(`li[data-address="${addr}"]`)?.getAttribute('data-mark');
    expect(mark('192.0.2.9')).toBe('kernel-only');
    expect(mark('fe80::1')).toBe('kernel-auto');
    expect(eth0.querySelector('li[data-mark="both"]')?.textContent).toMatch(/10\.88\.0\.\d+\/16/);
    const missing = eth0.querySelector('li[data-mark="cni-only"]') as HTMLElement;
    expect(missing.textContent).toMatch(new RegExp(`${st.additionalIps[0]}.*✗ missing in kernel`));
    expect(screen.getByTestId('live-network-summary').textContent).toContain('1 address from the CNI result missing in the kernel');
    expect(screen.getByTestId('live-network-summary').textContent).toContain('1 address in the kernel the CNI result does not list');
    // the CNI result's default route is in the kernel
    const routes = screen.getByTestId('live-routes');
    expect(routes.querySelector('tr[data-dst="default"]')?.textContent).toContain('✓ listed');
  });
});

describe('Network tab: the Interfaces table', () => {
  it("shows the pod interface's MTU as the kernel in its netns has it (the CNI result carries none), with the time it was read", async () => {
    await open('network', {
      // a link MTU no default would give
      tamper: (kernel, s) => void (kernel.podLinks(s.netnsPath!).find((l) => l.name === 'eth0')!.mtu = 1450),
    });
    const table = await screen.findByTestId('interfaces');
    await waitFor(() => expect(table.querySelector('tr[data-iface="eth0"] [data-testid="iface-mtu"]')?.textContent).toBe('1450'));
    const cell = table.querySelector('tr[data-iface="eth0"] [data-testid="iface-mtu"]') as HTMLElement;
    expect(cell.dataset.mtuFrom).toBe('kernel');
    expect(cell.title).toMatch(/^read from the kernel in the pod's netns at \d{4}-/);
    expect(screen.getByTestId('interfaces-mtu-source').textContent).toMatch(/read from the kernel in its netns at \d\d:\d\d:\d\d/);
    // the host end is not in the pod's netns: no number made up for it
    const host = table.querySelector('tr[data-side="host"] [data-testid="iface-mtu"]') as HTMLElement;
    expect(host.textContent).toBe('—');
  });
});
