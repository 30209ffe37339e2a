// @vitest-environment jsdom
/**
 * The compare picker: b may be a run, a pod of this engine (its recorded ADD) or a pod of a CRI endpoint this process
 * measures, grouped under that endpoint and said to come from libcni's cache; picking one asks for
 * `endpoint:<endpoint id>:<sandbox id>`.
 */
import { cleanup, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { EndpointView } from '../../../../../shared/domain/endpoints';
import type { SandboxSummary } from '../../../../../shared/domain/sandbox';
import { LabRuns } from './LabRuns';

afterEach(cleanup);

const pod = (id: string, name: string) => ({ id, name }) as unknown as SandboxSummary;
const ctd = { id: 'cri-1', kind: 'cri', label: 'containerd', connected: true } as unknown as EndpointView;

describe('the lab compare picker', () => {
  it("offers a CRI endpoint's pods under that endpoint, from libcni's cache, and picks endpoint:<id>:<pod>", async () => {
    const picked: string[] = [];
    render(
      <LabRuns
        runs={[]}
        pods={[pod('a'.repeat(64), 'own')]}
        endpointPods={[{ endpoint: ctd, pods: [pod('b'.repeat(64), 'web')] }]}
        a=""
        b=""
        setA={() => undefined}
        setB={(v) => picked.push(v)}
        onShow={() => undefined}
      />,
    );
    const select = screen.getByRole('combobox', { name: "b: a live pod's ADD" });
    const group = select.querySelector('optgroup')!;
    expect(group.label).toBe("containerd (from libcni's cache)");
    expect(within(group as unknown as HTMLElement).getByRole('option').textContent).toBe('web');
    await userEvent.selectOptions(select, 'web');
    expect(picked).toEqual([`endpoint:cri-1:${'b'.repeat(64)}`]);
  });
});
