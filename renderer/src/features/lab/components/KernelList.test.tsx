// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { KernelList, LinkMtus } from './RunView';

afterEach(cleanup);

describe('lab kernel state', () => {
  it("shows a tbf qdisc's rate in bit/s and its burst in bytes, not tc's bare bytes-per-second number", () => {
    render(
      <KernelList
        empty="nothing"
        items={[
          { kind: 'qdisc', what: 'dev veth1a2b tbf 1: root rate 1250000 burst 12500' },
          { kind: 'link', what: 'lab0 bridge mtu 1500' },
        ]}
      />,
    );
    expect(screen.getByText('dev veth1a2b tbf 1: root rate 10 Mbit/s burst 12.5 kB')).toBeTruthy();
    expect(screen.getByText('lab0 bridge mtu 1500')).toBeTruthy();
  });
});

describe('lab links with their MTU', () => {
  it('shows each link with its MTU and says why a host veth below the pod interface is marked', () => {
    render(
      <LinkMtus
        run={{
          ifName: 'eth0',
          linkMtus: [
            { where: 'netns', name: 'eth0', kind: 'veth', mtu: 1500 },
            { where: 'host', name: 'veth1a2b', kind: 'veth', master: 'lab0', mtu: 1400 },
          ],
        }}
      />,
    );
    const rows = screen.getByTestId('lab-link-mtus').querySelectorAll('tr');
    expect([...rows].map((r) => r.getAttribute('data-link'))).toEqual(['eth0', 'veth1a2b']);
    expect(rows[0]!.textContent).toContain("the run's interface");
    expect(rows[0]!.getAttribute('data-narrower')).toBeNull();
    expect(rows[1]!.getAttribute('data-narrower')).toBe('true');
    expect(rows[1]!.textContent).toContain('MTU 1400');
    expect(rows[1]!.textContent).toContain("below the run's eth0 (1500): packets over 1400 bytes vanish here");
  });
});
