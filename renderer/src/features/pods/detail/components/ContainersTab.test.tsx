// @vitest-environment jsdom
/**
 * The Containers tab over the real engine (CreateContainer/StartContainer/ContainerStatus over the touch-point fakes):
 * what it shows comes from the engine's container status, and "Add container" creates what its preview shows.
 * The fake container runtime has no streaming, so the terminal and port-forward say so here.
 */
import { useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { renderWithEngine } from '../../../../test/render-with-engine';
import { useEngineEvents } from '../../../../app/engine-events';
import { useNavigation } from '../../../../lib/navigation';
import { PodDetail } from './PodDetail';
import type { SandboxSummary } from '../../../../../../shared/domain/sandbox';

afterEach(() => {
  cleanup();
  useNavigation.setState({ detailTab: 'overview', selectedId: undefined });
});

const shown: { set?: (s: SandboxSummary) => void } = {};
/** the detail mounts once the pod exists (it is rendered inside the providers renderWithEngine sets up) */
function Detail() {
  const [summary, set] = useState<SandboxSummary>();
  shown.set = set;
  useEngineEvents();
  return summary ? <PodDetail summary={summary} /> : null;
}

async function podWithContainer(opts: { streaming?: null } = {}) {
  const r = await renderWithEngine(<Detail />, opts);
  await r.fakes.loadImage('podscope.test/busybox:1', { config: { Cmd: ['sh'] } });
  r.fakes.host.paths.add('/srv/data');
  const { id: podId } = await r.engine.run({
    config: { metadata: { name: 'web', namespace: 'default', uid: 'u' }, hostname: 'web', log_directory: `${r.fakes.dir}/logs/web` },
  });
  const { id } = await r.engine.createContainer({
    podSandboxId: podId,
    config: {
      metadata: { name: 'httpd' },
      image: { image: 'podscope.test/busybox:1' },
      command: ['httpd'],
      args: ['-f', '-p', '80'],
      log_path: 'httpd_0.log',
      mounts: [{ container_path: '/data', host_path: '/srv/data', readonly: true }],
      linux: {
        resources: { cpu_period: 100000, cpu_quota: 50000, memory_limit_in_bytes: 64 * 1024 * 1024 },
        security_context: { seccomp: { profile_type: 0 }, capabilities: { drop_capabilities: ['NET_RAW'] } },
      },
    },
  });
  await r.engine.startContainer(id);
  const summary = (await r.engine.list()).find((p) => p.id === podId)!;
  return { ...r, podId, id, summary };
}

describe('pod detail · Containers tab', () => {
  it('shows state, image, command, restarts, resources, mounts and the seccomp profile applied, from the container status', async () => {
    const r = await podWithContainer();
    act(() => useNavigation.setState({ selectedId: r.podId, detailTab: 'containers' }));
    act(() => shown.set!(r.summary));
    const table = await screen.findByRole('table', { name: 'Containers' });
    const row = within(table).getByText('httpd').closest('tr')!;
    expect(row.textContent).toContain('running');
    expect(row.textContent).toContain('podscope.test/busybox:1');
    const pane = await screen.findByRole('region', { name: 'Container httpd' });
    await within(pane).findByText('httpd -f -p 80', { selector: 'dd' });
    const status = await r.engine.containerStatus(r.id);
    // the profile the engine says the process runs under, not the config's request
    expect(within(pane).getByTestId('seccomp-profile').textContent).toBe(status.seccomp);
    expect(status.seccomp).not.toBe('');
    expect(pane.textContent).toContain('0.50 CPU');
    expect(pane.textContent).toContain('64.0 MiB');
    expect(pane.textContent).toContain('NET_RAW');
    const mounts = within(pane).getByRole('table', { name: 'Mounts' });
    expect(mounts.textContent).toContain('/data');
    expect(mounts.textContent).toContain('ro');

    // an exit shows code and reason once the engine notices it
    await act(async () => {
      r.fakes.containerRuntime.exit(r.id, 3);
      await r.engine.listContainers();
    });
    await waitFor(() => expect(within(table).getByText('httpd').closest('tr')!.textContent).toContain('exit 3 · Error'));
  });

  it('says the endpoint does not support exec or port-forward when it has no streaming', async () => {
    const r = await podWithContainer({ streaming: null });
    act(() => useNavigation.setState({ selectedId: r.podId, detailTab: 'containers' }));
    act(() => shown.set!(r.summary));
    const pane = await screen.findByRole('region', { name: 'Container httpd' });
    // the endpoint's capabilities have arrived once the forward row says so; only then is the Terminal tab's answer known
    await waitFor(() => expect(screen.getByRole('note').textContent).toContain('does not support port-forward'));
    fireEvent.click(within(pane).getByRole('tab', { name: 'Terminal' }));
    await screen.findByText('This endpoint does not support exec');
    // and the channel itself refuses with the same words
    await expect(r.client.call('stream.exec', { containerId: r.id, cmd: ['sh'] })).rejects.toMatchObject({
      code: 'Unimplemented',
      message: expect.stringContaining('does not support exec'),
    });
  });

  it('Add container: the preview is the crictl config, and creating starts that container in the pod', async () => {
    const r = await podWithContainer();
    act(() => useNavigation.setState({ selectedId: r.podId, detailTab: 'containers' }));
    act(() => shown.set!(r.summary));
    fireEvent.click(await screen.findByRole('button', { name: 'Add container' }));
    const form = await screen.findByRole('form', { name: 'Add container' });
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'ticker' } });
    fireEvent.change(within(form).getByLabelText('Image'), { target: { value: 'podscope.test/busybox:1' } });
    fireEvent.change(within(form).getByLabelText('Command'), { target: { value: '/bin/sh -c' } });
    fireEvent.change(within(form).getByLabelText('Arguments'), { target: { value: '"while true; do date; sleep 1; done"' } });
    fireEvent.change(within(form).getByLabelText('Memory limit (MiB)'), { target: { value: '32' } });
    fireEvent.change(within(form).getByLabelText('Container ports'), { target: { value: '80, 53/udp' } });
    fireEvent.click(within(form).getByRole('button', { name: '+ Add variable' }));
    fireEvent.change(within(form).getByLabelText('env 1 name'), { target: { value: 'MODE' } });
    fireEvent.change(within(form).getByLabelText('env 1 value'), { target: { value: 'fast' } });
    const preview = JSON.parse(screen.getByTestId('container-preview').textContent!) as Record<string, unknown>;
    expect(preview).toMatchObject({
      metadata: { name: 'ticker', attempt: 0 },
      image: { image: 'podscope.test/busybox:1' },
      command: ['/bin/sh', '-c'],
      args: ['while true; do date; sleep 1; done'],
      envs: [{ key: 'MODE', value: 'fast' }],
      annotations: { 'io.kubernetes.container.ports': '[{"containerPort":80,"protocol":"TCP"},{"containerPort":53,"protocol":"UDP"}]' },
      log_path: 'ticker_0.log',
      linux: { resources: { memory_limit_in_bytes: 32 * 1024 * 1024 } },
    });
    fireEvent.click(within(form).getByRole('button', { name: 'Create and start' }));
    await screen.findByRole('region', { name: 'Container ticker' });
    const made = (await r.engine.listContainers({ podSandboxId: r.podId })).find((c) => c.metadata.name === 'ticker')!;
    expect(made.state).toBe('CONTAINER_RUNNING');
    const st = await r.engine.containerStatus(made.id);
    expect(st.config.command).toEqual(['/bin/sh', '-c']);
    expect(st.config.envs).toEqual([{ key: 'MODE', value: 'fast' }]);
    expect(st.resources?.memory_limit_in_bytes).toBe(32 * 1024 * 1024);
  });

  it('Add container: a crictl file imports into the form, and invalid fields are named', async () => {
    const r = await podWithContainer();
    act(() => useNavigation.setState({ selectedId: r.podId, detailTab: 'containers' }));
    act(() => shown.set!(r.summary));
    fireEvent.click(await screen.findByRole('button', { name: 'Add container' }));
    const form = await screen.findByRole('form', { name: 'Add container' });
    fireEvent.click(within(form).getByRole('button', { name: 'Create and start' }));
    expect(await within(form).findByText('a container needs a name')).toBeTruthy();
    expect(within(form).getByText('an image is required')).toBeTruthy();

    fireEvent.click(within(form).getByRole('button', { name: 'Import…' }));
    fireEvent.change(screen.getByLabelText('crictl container config'), {
      target: {
        value:
          'metadata: {name: imported}\nimage: {image: podscope.test/busybox:1}\ncommand: [top]\nmounts: [{container_path: /x, host_path: /tmp}]\n',
      },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Import' }));
    expect((within(form).getByLabelText('Name') as HTMLInputElement).value).toBe('imported');
    expect((within(form).getByLabelText('Command') as HTMLInputElement).value).toBe('top');
    // what the form cannot carry is named, not dropped silently
    expect(screen.getByTestId('import-notice').textContent).toContain('mounts');
  });

  it('Add container: each field is validated as it is typed, like the pod form, before any submit', async () => {
    const r = await podWithContainer();
    act(() => useNavigation.setState({ selectedId: r.podId, detailTab: 'containers' }));
    act(() => shown.set!(r.summary));
    fireEvent.click(await screen.findByRole('button', { name: 'Add container' }));
    const form = await screen.findByRole('form', { name: 'Add container' });
    // untouched required fields say nothing yet
    expect(within(form).queryByText('a container needs a name')).toBeNull();
    fireEvent.change(within(form).getByLabelText('CPU limit (cores)'), { target: { value: 'lots' } });
    expect(within(form).getByText('cores as a number, e.g. 0.5')).toBeTruthy();
    expect(within(form).getByLabelText('CPU limit (cores)').getAttribute('aria-invalid')).toBe('true');
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'Web_1' } });
    expect(within(form).getByText(/a DNS label, as kubelet requires/)).toBeTruthy();
    fireEvent.change(within(form).getByLabelText('Log path'), { target: { value: '../escape.log' } });
    expect(within(form).getByText(/relative to the pod's log directory, without/)).toBeTruthy();
    fireEvent.click(within(form).getByRole('button', { name: '+ Add variable' }));
    fireEvent.change(within(form).getByLabelText('env 1 name'), { target: { value: '1BAD' } });
    expect(within(form).getByText('"1BAD" is not a variable name')).toBeTruthy();
    // fixing one clears its error at once
    fireEvent.change(within(form).getByLabelText('CPU limit (cores)'), { target: { value: '0.5' } });
    expect(within(form).queryByText('cores as a number, e.g. 0.5')).toBeNull();
    // the required image still waits for a touch or a submit; nothing was sent
    expect(within(form).queryByText('an image is required')).toBeNull();
    expect((await r.engine.listContainers({ podSandboxId: r.podId })).map((c) => c.metadata.name)).not.toContain('Web_1');
  });
});
