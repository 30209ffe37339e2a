/**
 * The app's image channels against a CRI endpoint: the same Images page calls (list, inspect with layers and config
 * from ImageStatus verbose info, pull, remove with the runtime's refusal) go through the CRI ImageService of an added
 * endpoint, here `podscope cri` over the real engine with fakes (its real image store pulling from a test registry
 * on 127.0.0.1, mirrored as `podscope.test`). A CRI endpoint without a streaming client says it
 * does not support exec.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { createEndpointRegistry } from '../../electron/endpoints';
import { createRouter } from '../../electron/ipc/router';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { createClient } from '../../shared/ipc/client';
import { tempDir } from './helpers/grpc';

let fakes: TestEngine;
let server: CriServer;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  tmp = tempDir('psu-cri-img-');
  fakes = await createTestEngine({ registry: true });
  server = await startCriServer({ engine: fakes.engine, socketPath: join(tmp.dir, 'cri.sock') });
});
afterAll(async () => {
  await server?.close();
  await fakes?.close();
  tmp?.cleanup();
});

describe('image channels over a CRI endpoint', () => {
  it('lists, inspects (layers, config), pulls and removes through the ImageService; a refused removal keeps its code', async () => {
    // the app's own engine is a second, empty one: everything below comes from the CRI endpoint
    const own = await createTestEngine();
    const endpoints = createEndpointRegistry({ local: own.engine });
    const router = createRouter({ engine: own.engine, endpoints, isTrustedSender: () => true });
    const client = createClient({
      kind: 'memory',
      invoke: (c, p) => router.handle(c, p, { transport: 'memory', url: 'test://' }),
      onEvent: (l) => router.subscribe(l),
    });
    try {
      const ep = await client.call('endpoints.add', { address: server.socketPath });
      // a Podscope daemon serves Exec (its engine over fakes streams), so the endpoint offers exec too
      expect(ep.capabilities).toMatchObject({ images: true, streaming: true });
      const web = await fakes.loadImage('podscope.test/web:1', { config: { Cmd: ['httpd'], WorkingDir: '/www' } });
      fakes.serveImage('podscope.test/new:2');

      const list = await client.call('images.list', { endpointId: ep.id });
      expect(list.map((i) => i.repoTags)).toEqual([['podscope.test/web:1']]);
      const detail = await client.call('images.inspect', { endpointId: ep.id, ref: 'podscope.test/web:1' });
      expect(detail?.layers).toEqual(web.diffIds);
      expect(detail?.config).toMatchObject({ Cmd: ['httpd'], WorkingDir: '/www' });
      expect(await client.call('images.inspect', { endpointId: ep.id, ref: 'podscope.test/absent:1' })).toBeNull();

      const pulled = await client.call('images.pull', { endpointId: ep.id, ref: 'podscope.test/new:2' });
      expect(pulled.repoTags).toContain('podscope.test/new:2');

      const { id: podId } = await fakes.engine.run({ config: { metadata: { name: 'p', namespace: 'default', uid: 'u' } } });
      await fakes.engine.createContainer({
        podSandboxId: podId,
        config: { metadata: { name: 'c' }, image: { image: 'podscope.test/web:1' } },
      });
      await expect(client.call('images.remove', { endpointId: ep.id, ref: 'podscope.test/web:1' })).rejects.toMatchObject({
        code: 'FailedPrecondition',
      });
      await client.call('images.remove', { endpointId: ep.id, ref: 'podscope.test/new:2' });
      expect((await client.call('images.list', { endpointId: ep.id })).map((i) => i.repoTags[0])).toEqual(['podscope.test/web:1']);
    } finally {
      router.dispose();
      endpoints.close();
      await own.close();
    }
  });
});
