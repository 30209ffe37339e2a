/**
 * The CLI's image commands beside a running engine on the same state dir (the app, `podscope serve` or `cri` hold
 * it): the image store has its own lock, so `images load`, `images` and `inspecti` work, and the running engine sees
 * what the CLI loaded. No network config is needed; everything lives under /tmp/podscope-split-images-*.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../electron/engine/index';
import { buildBusyboxImage, writeDockerSave } from '../../testkit/busybox-image';
import { podscope } from './helpers/podscope-cli';

const isRoot = process.getuid?.() === 0;
let base: string;
let flags: string[];
let engine: Awaited<ReturnType<typeof createEngine>> | undefined;

describe.skipIf(!isRoot)('image commands beside a running engine', () => {
  beforeAll(async () => {
    base = await mkdtemp('/tmp/podscope-split-images-');
    await mkdir(join(base, 'net.d'));
    const dirs = {
      stateDir: join(base, 'state'),
      runDir: join(base, 'run'),
      cniConfDir: join(base, 'net.d'),
      cniCacheDir: join(base, 'cni-cache'),
      netnsDir: join(base, 'netns'),
    };
    flags = ['--state-dir', dirs.stateDir, '--run-dir', dirs.runDir, '--cni-conf-dir', dirs.cniConfDir];
    flags.push('--cni-cache-dir', dirs.cniCacheDir, '--netns-dir', dirs.netnsDir);
    engine = await createEngine(dirs, { log: () => undefined });
  });

  afterAll(async () => {
    await engine?.close();
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

  it('the engine holds the state dir, and images load / images / inspecti still work; the engine sees the loaded image', async () => {
    // the state dir is taken: a command that changes sandboxes is still refused
    const rmp = await podscope('rmp', 'abc', ...flags);
    expect(rmp.code).not.toBe(0);
    expect(rmp.stderr).toMatch(/in use by another Podscope engine/);

    const image = buildBusyboxImage({ compression: 'gzip' });
    const saved = writeDockerSave(join(base, 'saved.tar'), [{ image, repoTags: ['busybox:beside'] }]);
    const loaded = await podscope('images', 'load', saved, ...flags);
    expect(loaded.stderr).toBe('');
    expect(loaded.stdout).toBe(`Loaded image: docker.io/library/busybox:beside (${image.id})\n`);

    const listed = await podscope('images', '-q', ...flags);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(`${image.id}\n`);
    const inspected = JSON.parse((await podscope('inspecti', 'busybox:beside', ...flags)).stdout) as { status: { id: string } };
    expect(inspected.status.id).toBe(image.id);

    // the running engine reads the record the CLI wrote, without a restart
    expect((await engine!.images.resolve('busybox:beside'))?.id).toBe(image.id);
    expect((await engine!.images.list()).map((i) => i.id)).toEqual([image.id]);

    // and what the engine removes, the CLI no longer lists
    await engine!.images.remove('busybox:beside');
    expect((await podscope('images', '-q', ...flags)).stdout).toBe('');
  });
});
