// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, within } from '@testing-library/react';
import type { LabKernelChange, LabRun } from '../../../../../shared/domain/lab';
import { Verdict } from './RunView';

afterEach(cleanup);

const downAfterDel: LabKernelChange = {
  where: 'host',
  kind: 'link',
  subject: 'pls-hd0',
  field: 'state',
  before: 'UP',
  after: 'DOWN',
  owner: 'host-device',
  text: 'host link pls-hd0: state UP → DOWN',
};
const forwarding: LabKernelChange = {
  where: 'host',
  kind: 'sysctl',
  subject: 'net.ipv4.ip_forward',
  field: 'value',
  before: '0',
  after: '1',
  owner: 'bridge',
  why: 'bridge turns on forwarding',
  text: 'host sysctl net.ipv4.ip_forward 0 → 1',
};
const run = (changedAfterDel: LabKernelChange[]) => ({ leftAfterDel: [], keptByDesign: [], changedAfterDel }) as unknown as LabRun;

describe('lab verdict with values changed in place', () => {
  it('a host link DEL left DOWN is no "no leak": it is named with before → after and its owner', () => {
    render(<Verdict run={run([downAfterDel, forwarding])} />);
    const verdict = screen.getByTestId('lab-verdict');
    expect(verdict.className).toContain('callout-bad');
    expect(verdict.textContent).toContain('DEL did not put back 1 value it changed on the host');
    const rows = within(verdict).getAllByTestId('lab-change');
    // forwarding stays on by design: not in the verdict's list
    expect(rows).toHaveLength(1);
    expect(rows[0]!.textContent).toContain('pls-hd0 state');
    expect(rows[0]!.textContent).toContain('UP → DOWN');
    expect(rows[0]!.textContent).toContain('by host-device');
  });

  it('changes kept by design only: the verdict stays clean, and does not claim that nothing stayed changed', () => {
    render(<Verdict run={run([forwarding])} />);
    const verdict = screen.getByTestId('lab-verdict');
    expect(verdict.className).toContain('callout-ok');
    expect(verdict.textContent).not.toContain('nothing it changed on the host stayed changed');
    expect(verdict.textContent).toContain("1 value still differs by the plugins' design or inside the run's own netns");
  });

  it('nothing changed after DEL: the verdict says so', () => {
    render(<Verdict run={run([])} />);
    expect(screen.getByTestId('lab-verdict').textContent).toContain('nothing it changed on the host stayed changed');
  });
});
