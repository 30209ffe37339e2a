// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { renderWithEngine } from '../../../test/render-with-engine';
import { useNavigation } from '../../../lib/navigation';
import { CreatePage } from './CreatePage';

afterEach(() => {
  cleanup();
  useNavigation.setState({ formSeed: undefined, view: 'create' });
});

describe('CreatePage', () => {
  it('validates bandwidth as you type and sends nothing when invalid', async () => {
    const user = userEvent.setup();
    const { engine, calls } = await renderWithEngine(<CreatePage />);
    await user.type(screen.getByLabelText('Name'), 'web');
    await user.selectOptions(screen.getByLabelText('ingress bandwidth unit'), '');
    await user.type(screen.getByLabelText('ingress bandwidth'), '10X');
    expect((await screen.findByTestId('ingress-error')).textContent).toMatch(/^"10X" is not a bandwidth\. Accepted: .*e\.g\. 10M, 512k/);
    expect(screen.getByLabelText('ingress bandwidth').getAttribute('aria-invalid')).toBe('true');
    await user.click(screen.getByRole('button', { name: 'Create sandbox' }));
    expect((await screen.findByTestId('form-error-summary')).textContent).toContain('nothing was created');
    expect(calls).not.toContain('sandbox.run');
    expect(await engine.list()).toEqual([]);
    // fixing it clears the error
    await user.clear(screen.getByLabelText('ingress bandwidth'));
    await user.type(screen.getByLabelText('ingress bandwidth'), '10M');
    await waitFor(() => expect(screen.queryByTestId('ingress-error')).toBeNull());
    expect(screen.getByText(/10000000 bit\/s = 10 Mbit\/s/)).toBeTruthy();
  });

  it('previews the runtimeConfig each plugin would receive, through the preview channel', async () => {
    const user = userEvent.setup();
    const { calls } = await renderWithEngine(<CreatePage />);
    await user.type(screen.getByLabelText('Name'), 'web');
    await user.click(screen.getByRole('button', { name: '+ Add port mapping' }));
    await user.type(screen.getByLabelText('Port 1 container port'), '80');
    await user.type(screen.getByLabelText('Port 1 host port'), '8080');
    await user.click(screen.getByRole('button', { name: '+ Add port mapping' }));
    await user.type(screen.getByLabelText('Port 2 container port'), '9090');
    expect(screen.getByText(/host port 0: containerd does not pass this mapping to CNI/)).toBeTruthy();
    await user.type(screen.getByLabelText('egress bandwidth'), '5');
    const plugins = await screen.findByTestId('preview-plugins', {}, { timeout: 3000 });
    await waitFor(() => {
      const portmap = plugins.querySelector('[data-plugin="portmap"]') as HTMLElement;
      expect(portmap.textContent).toContain('"hostPort": 8080');
      expect(portmap.textContent).not.toContain('9090');
      expect((plugins.querySelector('[data-plugin="bandwidth"]') as HTMLElement).textContent).toContain('"egressRate": 5000000');
    });
    expect(within(plugins).getByText(/port mapping #1 \(9090\)/)).toBeTruthy();
    expect(calls).toContain('sandbox.preview');
  });

  it('submits a valid form and shows each step from progress events', async () => {
    const user = userEvent.setup();
    const { engine } = await renderWithEngine(<CreatePage />);
    await user.type(screen.getByLabelText('Name'), 'web');
    await user.click(screen.getByRole('button', { name: 'Create sandbox' }));
    const progress = await screen.findByTestId('run-progress');
    await within(progress).findByText('Sandbox created');
    expect(within(progress).getByText('create network namespace')).toBeTruthy();
    expect((await engine.list()).map((p) => p.metadata.name)).toEqual(['web']);
  });

  it('shows an engine error inline with its code', async () => {
    const user = userEvent.setup();
    const { engine, fakes } = await renderWithEngine(<CreatePage />);
    // the bridge plugin (first in containerd-net) fails its ADD: the engine's own error reaches the form
    fakes.cni.failures.push({ verb: 'ADD', network: 'containerd-net', index: 0, message: 'no space left', once: true });
    await user.type(screen.getByLabelText('Name'), 'web');
    await user.click(screen.getByRole('button', { name: 'Create sandbox' }));
    // containerd's wording (sandbox_run.go), as the engine really produces it
    const alert = await screen.findByText(
      /^failed to setup network for sandbox "[0-9a-f]{64}": plugin type="bridge" failed \(add\): no space left \(network "[^"]+", file \/\S+\.conflist\)$/,
      undefined,
      { timeout: 10_000 },
    );
    expect(alert.closest('.error-box')?.textContent).toContain('CniError');
    // and the engine undid what it had acquired
    expect(await engine.list()).toEqual([]);
    expect(fakes.netns.pinned.size).toBe(0);
  });

  it("says an empty hostname leaves the pod the host's hostname, not the pod name (no hostname is set for it)", async () => {
    const user = userEvent.setup();
    await renderWithEngine(<CreatePage />);
    await user.type(screen.getByLabelText('Name'), 'web');
    const hostname = screen.getByLabelText('Hostname') as HTMLInputElement;
    expect(hostname.placeholder).not.toBe('web');
    expect(hostname.placeholder).toMatch(/host's hostname/);
    expect(hostname.closest('.field')!.textContent).toMatch(/keeps the host's hostname \(kubelet would set "web"/);
    // host network: the host's UTS namespace, so a hostname cannot be set at all
    await user.click(screen.getByText('Host'));
    expect(hostname.closest('.field')!.textContent).toMatch(/shares the host's UTS namespace/);
    await user.type(hostname, 'web-1');
    expect(hostname.getAttribute('aria-invalid')).toBe('true');
  });

  it("defaults the log directory to kubelet's and says so in the preview; the run gets it", async () => {
    const user = userEvent.setup();
    const { engine } = await renderWithEngine(<CreatePage />);
    await user.type(screen.getByLabelText('Name'), 'web');
    const uid = (screen.getByLabelText('UID') as HTMLInputElement).value;
    const dir = screen.getByLabelText('Log directory') as HTMLInputElement;
    expect(dir.value).toBe(`/var/log/pods/default_web_${uid}`);
    expect(screen.getByTestId('preview-logs').textContent).toContain(`container logs: /var/log/pods/default_web_${uid}/`);
    await user.click(screen.getByRole('tab', { name: 'crictl JSON' }));
    expect(screen.getByTestId('preview-json').textContent).toContain(`"log_directory": "/var/log/pods/default_web_${uid}"`);
    // editable: cleared, the preview says containers keep no log
    await user.clear(dir);
    expect(screen.getByTestId('preview-logs').textContent).toMatch(/no log_directory: containers of this pod keep no log/);
    await user.click(screen.getByRole('button', { name: "use kubelet's default" }));
    await user.click(screen.getByRole('button', { name: 'Create sandbox' }));
    await within(await screen.findByTestId('run-progress')).findByText('Sandbox created');
    const [created] = await engine.list();
    expect((await engine.status(created!.id)).config.log_directory).toBe(`/var/log/pods/default_web_${uid}`);
  });
});
