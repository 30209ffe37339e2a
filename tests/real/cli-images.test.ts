/**
 * `podscope pull / images / rmi / images load` as crictl users drive them, against the test registry on 127.0.0.1
 * (basic auth through --creds), locally and through --endpoint on a `podscope cri` server. All state lives in one
 * temp dir /tmp/podscope-i1-cli-images-*; no network config is needed for images.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBusyboxImage, writeDockerSave, writeOciLayout, type BuiltImage } from '../../testkit/busybox-image';
import { startTestRegistry, type TestRegistry } from '../../testkit/registry';
import { podscope } from './helpers/podscope-cli';

const isRoot = process.getuid?.() === 0;
let base: string;
let registry: TestRegistry;
let image: BuiltImage;
let flags: string[];

describe.skipIf(!isRoot)('podscope image commands', () => {
  beforeAll(async () => {
    base = await mkdtemp('/tmp/podscope-i1-cli-images-');
    await mkdir(join(base, 'net.d'));
    flags = [
      '--state-dir',
      join(base, 'state'),
      '--run-dir',
      join(base, 'run'),
      '--cni-conf-dir',
      join(base, 'net.d'),
      '--cni-cache-dir',
      join(base, 'cni-cache'),
      '--netns-dir',
      join(base, 'netns'),
    ];
    image = buildBusyboxImage({ compression: 'gzip' });
    registry = await startTestRegistry({ port: 27300, portAttempts: 100, auth: { kind: 'basic', username: 'cli', password: 'pw' } });
    registry.putImage('tools/busybox', '1.36', image);
  });

  afterAll(async () => {
    await registry?.close();
    if (base) {
      for (const m of readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .map((l) => l.split(' ')[4])
        .filter((m): m is string => !!m && m.startsWith(base))
        .reverse())
        execFileSync('umount', ['-l', m]);
      await rm(base, { recursive: true, force: true });
    }
  });

  it('pull --creds, images (table, -q, -o json), rmi; a wrong password and a missing image fail with their exit codes', async () => {
    const ref = `${registry.host}/tools/busybox:1.36`;
    const denied = await podscope('pull', '--creds', 'cli:wrong', ref, ...flags);
    expect(denied.code).toBe(5); // FailedPrecondition
    expect(denied.stderr).toMatch(/unauthorized/);
    const pulled = await podscope('pull', '--creds', 'cli:pw', ref, ...flags);
    expect(pulled.stderr).toBe('');
    expect(pulled.stdout).toBe(`Image is up to date for ${image.id}\n`);

    const table = await podscope('images', ...flags);
    expect(table.stdout).toMatch(/^IMAGE\s+TAG\s+IMAGE ID\s+SIZE\n/);
    expect(table.stdout).toMatch(new RegExp(`${registry.host}/tools/busybox\\s+1\\.36\\s+${image.id.slice(7, 20)}\\s+\\d+(\\.\\d+)?MB`));
    expect((await podscope('images', '-q', ...flags)).stdout).toBe(`${image.id}\n`);
    const json = JSON.parse((await podscope('images', '-o', 'json', ...flags)).stdout) as {
      images: { id: string; repoTags: string[]; size: string }[];
    };
    expect(json.images).toEqual([expect.objectContaining({ id: image.id, repoTags: [ref], size: String(image.layerTars[0]!.length) })]);

    const inspected = JSON.parse((await podscope('inspecti', image.id.slice(7, 19), ...flags)).stdout) as {
      status: { id: string };
      info: { imageSpec: { config: { Cmd: string[] } }; diffIds: string[] };
    };
    expect(inspected.status.id).toBe(image.id);
    expect(inspected.info.imageSpec.config.Cmd).toEqual(['sh']);
    expect(inspected.info.diffIds).toEqual(image.diffIds);

    const rmi = await podscope('rmi', ref, ...flags);
    expect(rmi.stdout).toBe(`Deleted: ${ref}\n`);
    expect((await podscope('images', '-q', ...flags)).stdout).toBe('');
    const missing = await podscope('rmi', ref, ...flags);
    expect(missing.code).toBe(3); // NotFound
    expect(missing.stderr).toMatch(/no such image/);
  });

  it('images load FILE (docker save) and load FILE (OCI layout tar)', async () => {
    const saved = writeDockerSave(join(base, 'saved.tar'), [{ image, repoTags: ['busybox:saved'] }]);
    const loaded = await podscope('images', 'load', saved, ...flags);
    expect(loaded.stdout).toBe(`Loaded image: docker.io/library/busybox:saved (${image.id})\n`);
    const zstd = buildBusyboxImage({ compression: 'zstd', whiteoutLayer: true });
    const layout = writeOciLayout({ tarFile: join(base, 'layout.tar') }, [{ image: zstd, ref: 'podscope.local/zstd:1' }]);
    expect((await podscope('load', layout, ...flags)).stdout).toBe(`Loaded image: podscope.local/zstd:1 (${zstd.id})\n`);
    expect((await podscope('images', 'busybox:saved', '-q', ...flags)).stdout).toBe(`${image.id}\n`);
    expect((await podscope('rmi', 'busybox:saved', 'podscope.local/zstd:1', ...flags)).code).toBe(0);
    const bad = await podscope('load', join(base, 'nothing.tar'), ...flags);
    expect(bad.code).toBe(3);
  });

  it('drives a CRI endpoint with --endpoint (a `podscope cri` server): pull, images, rmi; load is refused as Unimplemented', async () => {
    const { createEngine } = await import('../../electron/engine/index');
    const { startCriServer } = await import('../../electron/cri/server');
    const engine = await createEngine({
      stateDir: join(base, 'cri-state'),
      runDir: join(base, 'cri-run'),
      cniConfDir: join(base, 'net.d'),
      cniCacheDir: join(base, 'cni-cache'),
      netnsDir: join(base, 'netns'),
    });
    const server = await startCriServer({ engine, socketPath: join(base, 'cri.sock') });
    const endpoint = `unix://${server.socketPath}`;
    try {
      const ref = `${registry.host}/tools/busybox:1.36`;
      const pulled = await podscope('--endpoint', endpoint, 'pull', '--creds', 'cli:pw', ref);
      expect(pulled.stdout).toBe(`Image is up to date for ${image.id}\n`);
      expect((await podscope('--endpoint', endpoint, 'images', '-q')).stdout).toBe(`${image.id}\n`);
      const inspected = JSON.parse((await podscope('--endpoint', endpoint, 'inspecti', ref)).stdout) as {
        status: { id: string };
        info: { imageSpec: { rootfs: { diff_ids: string[] } } };
      };
      expect(inspected.info.imageSpec.rootfs.diff_ids).toEqual(image.diffIds);
      expect((await engine.images.list()).map((i) => i.id)).toEqual([image.id]);
      expect((await podscope('--endpoint', endpoint, 'rmi', image.id.slice(7, 19))).stdout).toBe(`Deleted: ${ref}\n`);
      expect(await engine.images.list()).toEqual([]);
      const load = await podscope('--endpoint', endpoint, 'load', join(base, 'saved.tar'));
      expect(load.code).toBe(11); // Unimplemented
    } finally {
      await server.close();
      await engine.close();
    }
  });
});
