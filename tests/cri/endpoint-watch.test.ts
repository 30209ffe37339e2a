/**
 * The endpoint registry notices a CRI daemon that died without being asked (its watch pings), pushes the change to
 * listeners, and sees it come back on the same socket; added endpoints can be renamed. A real CRI server over the
 * test engine plays the daemon.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { createEndpointRegistry, type CriEndpointRegistry } from '../../electron/endpoints';
import type { EndpointView } from '../../shared/domain/endpoints';
import { createTestEngine, type TestEngine } from '../../testkit/fakes/test-engine';
import { tempDir } from './helpers/grpc';

let fakes: TestEngine;
let server: CriServer | undefined;
let registry: CriEndpointRegistry;
let tmp: ReturnType<typeof tempDir>;
let socketPath: string;

beforeAll(async () => {
  tmp = tempDir('podscope-u1-watch-');
  fakes = await createTestEngine({ tmpPrefix: 'podscope-u1-watch-engine-' });
  socketPath = join(tmp.dir, 'cri.sock');
  server = await startCriServer({ engine: fakes.engine, socketPath });
  registry = createEndpointRegistry({ local: fakes.engine, watchIntervalMs: 200, pingTimeoutMs: 500 });
});
afterAll(async () => {
  registry?.close();
  await server?.close();
  await fakes?.close();
  tmp?.cleanup();
});

/** resolves with the first pushed list that satisfies `ok` */
function nextChange(ok: (list: EndpointView[]) => boolean): Promise<EndpointView[]> {
  return new Promise((resolve) => {
    const stop = registry.onChange((list) => {
      if (!ok(list)) return;
      stop();
      resolve(list);
    });
  });
}

describe('endpoint watch', () => {
  it('pushes a daemon that died and one that came back, with no list() call in between', async () => {
    const added = await registry.add({ address: socketPath });
    expect(added.label).toBe('podscope · cri.sock');
    const lost = nextChange((l) => l.some((e) => e.id === added.id && !e.connected));
    await server!.close();
    server = undefined;
    const list = await lost;
    const view = list.find((e) => e.id === added.id)!;
    expect(view.error).toContain(socketPath);
    // grpc-js's empty "Resolution note:" is not passed on
    expect(view.error).not.toMatch(/Resolution note:\s*$/);

    const back = nextChange((l) => l.some((e) => e.id === added.id && e.connected));
    server = await startCriServer({ engine: fakes.engine, socketPath });
    expect((await back).find((e) => e.id === added.id)).toMatchObject({ connected: true, runtimeName: 'podscope' });
  });

  it('renames an added endpoint and pushes the new label; the built-in engine cannot be renamed', async () => {
    const [, ep] = await registry.list();
    const pushed = nextChange((l) => l.some((e) => e.label === 'daemon B'));
    expect(await registry.rename(ep!.id, '  daemon B ')).toMatchObject({ id: ep!.id, label: 'daemon B' });
    await pushed;
    expect((await registry.list()).map((e) => e.label)).toContain('daemon B');
    await expect(registry.rename('local', 'x')).rejects.toMatchObject({ code: 'FailedPrecondition' });
    await expect(registry.rename(ep!.id, '  ')).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(registry.rename('cri-99', 'x')).rejects.toMatchObject({ code: 'NotFound' });
  });
});
