// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { KernelList } from './RunView';

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
