// @vitest-environment jsdom
/**
 * The Images page over the real engine's image channels and its real image store, pulling from a test registry on
 * 127.0.0.1 (the `podscope.test` registry is mirrored to it): pull shows progress and lands in the list, inspect shows
 * layers and config, and a removal the engine refuses (a container still uses the image) shows the engine's own error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { renderWithEngine } from '../../../test/render-with-engine';
import { ImagesPage } from './ImagesPage';

afterEach(cleanup);

describe('Images page', () => {
  it('pulls with progress, lists, and inspects layers and config', async () => {
    const { fakes } = await renderWithEngine(<ImagesPage />, { registry: true });
    const web = fakes.serveImage('podscope.test/web:2', {
      config: { Entrypoint: ['/bin/httpd'], Cmd: ['-f'], Env: ['PATH=/bin'], WorkingDir: '/www', ExposedPorts: { '80/tcp': {} } },
      // two layers whose tars (padded to 10 KiB records) are 2.5 MiB each: 5 MiB unpacked
      layers: [{ 'data/a': Buffer.alloc(2_616_000) }, { 'data/b': Buffer.alloc(2_616_000, 1) }],
    });
    await screen.findByText('No images yet');
    fireEvent.change(screen.getByLabelText('Image to pull'), { target: { value: 'podscope.test/web:2' } });
    fireEvent.click(screen.getByRole('button', { name: 'Pull' }));
    await screen.findByText(/Pulled podscope.test\/web:2/);
    const table = await screen.findByRole('table', { name: 'Images' });
    const row = within(table).getByText('podscope.test/web').closest('tr')!;
    // SI bytes, as crictl images prints them (5 MiB is 5.24 MB; it was shown as "5.0 MB", a MiB under an MB label)
    expect(row.textContent).toContain('5.24 MB');
    expect(row.textContent).toContain('2');
    fireEvent.click(within(row).getByRole('button', { name: 'podscope.test/web' }));
    const inspect = await screen.findByRole('complementary', { name: 'Image podscope.test/web:2' });
    const layers = await within(inspect).findByRole('list', { name: 'Layers' });
    expect(
      within(layers)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(web.diffIds);
    expect(inspect.textContent).toContain('/bin/httpd');
    expect(inspect.textContent).toContain('/www');
    expect(inspect.textContent).toContain('80/tcp');
  });

  it('shows the progress the store reports while a pull runs', async () => {
    const { fakes, client } = await renderWithEngine(<ImagesPage />, { registry: true });
    let release!: () => void;
    const store = fakes.images;
    const pull = store.pull.bind(store);
    store.pull = async (ref, opts) => {
      opts?.onProgress?.({ ref, phase: 'layer sha256:aaaa', doneBytes: 512, totalBytes: 2048 });
      await new Promise<void>((r) => (release = r));
      return pull(ref, opts);
    };
    fakes.serveImage('podscope.test/slow:1');
    fireEvent.change(await screen.findByLabelText('Image to pull'), { target: { value: 'podscope.test/slow:1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Pull' }));
    const status = await screen.findByRole('status', { name: 'Pull progress' });
    await waitFor(() => expect(status.textContent).toContain('layer sha256:aaaa 25%'));
    act(() => release());
    await screen.findByText(/Pulled podscope.test\/slow:1/);
    expect((await client.call('images.list', {})).map((i) => i.repoTags[0])).toEqual(['podscope.test/slow:1']);
  });

  it('a removal the engine refuses shows its error; an unused image goes', async () => {
    const { fakes, engine } = await renderWithEngine(<ImagesPage />);
    await fakes.loadImage('podscope.test/used:1');
    await fakes.loadImage('podscope.test/free:1');
    const { id: podId } = await engine.run({ config: { metadata: { name: 'p', namespace: 'default', uid: 'u' } } });
    const { id: ctrId } = await engine.createContainer({
      podSandboxId: podId,
      config: { metadata: { name: 'c' }, image: { image: 'podscope.test/used:1' } },
    });
    fireEvent.click(await screen.findByRole('button', { name: 'Refresh' }));
    const table = await screen.findByRole('table', { name: 'Images' });
    await within(table).findByText('podscope.test/used');

    fireEvent.click(within(table).getByRole('button', { name: 'Remove podscope.test/used:1' }));
    fireEvent.click(within(screen.getByRole('dialog', { name: 'Remove image' })).getByRole('button', { name: 'Remove' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('FailedPrecondition');
    expect(alert.textContent).toContain('in use by container');
    // the container by its name and short id, not its 64-hex id
    await waitFor(() => expect(alert.textContent).toContain(`c (${ctrId.slice(0, 12)})`));
    expect(screen.getByRole('alert').querySelector('.error-msg')!.textContent).not.toContain(ctrId);
    expect(within(table).getByText('podscope.test/used')).toBeTruthy();

    fireEvent.click(within(table).getByRole('button', { name: 'Remove podscope.test/free:1' }));
    fireEvent.click(within(screen.getByRole('dialog', { name: 'Remove image' })).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(within(table).queryByText('podscope.test/free')).toBeNull());
  });
});
