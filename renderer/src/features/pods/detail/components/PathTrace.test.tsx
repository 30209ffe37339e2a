// @vitest-environment jsdom
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProbePath } from '../../../../../../shared/domain/probe';
import { useNavigation } from '../../../../lib/navigation';
import { PathTrace } from './PathTrace';

const POD = 'a'.repeat(64);

const path: ProbePath = {
  kind: 'hostPort',
  from: 'host',
  to: '127.0.0.1:25000',
  proto: 'tcp',
  verdict: 'timeout',
  measured: true,
  note: '',
  family: 4,
  why: 'dropped in filter/OUTPUT of the host by `-A OUTPUT -j DROP`, a rule no CNI plugin installed',
  trace: {
    flow: { sport: 21000, dst: '127.0.0.1', dport: 25000 },
    missing: ['conntrack: not installed (no conntrack step)'],
    steps: [
      { kind: 'route', netns: 'host', family: 4, verdict: 'local', detail: 'route to 127.0.0.1: local 127.0.0.1 dev lo' },
      {
        kind: 'netfilter',
        netns: 'host',
        family: 4,
        table: 'nat',
        chain: 'CNI-DN-x',
        verdict: 'DNAT',
        rule: '-A CNI-DN-x -p tcp -j DNAT --to-destination 10.180.0.2:8080',
        owner: { plugin: 'portmap', network: 'psc-trc', sandboxId: POD },
        detail: 'nat/CNI-DN-x rule 5: DNAT',
      },
      {
        kind: 'netfilter',
        netns: 'host',
        family: 4,
        table: 'filter',
        chain: 'OUTPUT',
        verdict: 'DROP',
        rule: '-A OUTPUT -j DROP',
        owner: null,
        decisive: true,
        detail: 'filter/OUTPUT rule 9: DROP',
      },
      { kind: 'deliver', netns: 'host', family: 4, detail: 'nothing came back within the connect timeout' },
    ],
  },
};

afterEach(cleanup);

describe('the Why panel of a path', () => {
  it('lists the steps in order, highlights the deciding one, and shows who installed each rule', () => {
    render(<PathTrace path={path} sandboxId={POD} nameOf={(id) => (id === POD ? 'e2e/web' : undefined)} />);
    expect(screen.getByTestId('trace-why').textContent).toContain('a rule no CNI plugin installed');
    const items = screen.getAllByRole('listitem');
    expect(items.map((li) => li.getAttribute('data-kind'))).toEqual(['route', 'netfilter', 'netfilter', 'deliver']);
    const decisive = items.filter((li) => li.getAttribute('data-decisive') === 'true');
    expect(decisive).toHaveLength(1);
    expect(decisive[0]!.className).toContain('trace-step-decisive');
    expect(within(decisive[0]!).getByTestId('trace-owner').textContent).toBe('no plugin here');
    expect(within(items[1]!).getByTestId('trace-owner').textContent).toBe('portmap · psc-trc · pod e2e/web');
    expect(within(decisive[0]!).getByText('-A OUTPUT -j DROP').tagName).toBe('CODE');
    expect(screen.getByText(/not traced: conntrack/)).toBeTruthy();
  });

  it("an owned rule links to its pod's CNI trace; the path's own flow downloads as one pcapng", () => {
    render(
      <PathTrace
        path={{
          ...path,
          trace: { ...path.trace!, capture: { pcapngBase64: 'TQ==', interfaces: ['host/psc-trc', 'aaaa/eth0'], packets: 3 } },
        }}
        sandboxId={POD}
      />,
    );
    const links = screen.getAllByTestId('trace-owner-cni');
    // only the portmap rule written for a pod has one; the rule owned by nobody has none
    expect(links).toHaveLength(1);
    links[0]!.click();
    expect(useNavigation.getState()).toMatchObject({ selectedId: POD, detailTab: 'trace', view: 'pods' });
    expect(screen.getByTestId('trace-pcap').textContent).toBe('Download pcapng');
    expect(screen.getByText(/3 packets of this flow captured on 2 hops/)).toBeTruthy();
  });

  it('a partial trace shows what it could not trace before its verdict, in amber rather than red', () => {
    const gap = 'netfilter: xtables-monitor in the host (IPv4): cannot receive from nfnetlink socket: No buffer space available';
    render(
      <PathTrace
        path={{ ...path, why: `partial trace: ${gap} — so no cause is named`, trace: { ...path.trace!, missing: [gap], partial: true } }}
        sandboxId={POD}
      />,
    );
    const why = screen.getByTestId('trace-why');
    const missing = screen.getByTestId('trace-missing');
    expect(missing.compareDocumentPosition(why) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(why.className).toContain('trace-why-partial');
    expect(why.className).not.toContain('trace-why-bad');
  });

  it('says so when a path was not traced', () => {
    render(<PathTrace path={{ ...path, trace: undefined, why: undefined }} sandboxId={POD} />);
    expect(screen.getByText('This path was not traced.')).toBeTruthy();
  });
});
