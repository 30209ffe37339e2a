/**
 * The containers' rootfs overlay (images/overlay.ts HostRootfsMounter) with busybox's mount/umount applets and with
 * util-linux's, on the real kernel: the merged view shows the top layer over the lower one and takes writes into the
 * upper dir; unmount leaves nothing mounted. Needs root; everything lives in one temp dir, removed at the end.
 */
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostRootfsMounter } from '../../electron/engine/images/overlay';
import { NodeProcessRunner } from '../../electron/engine/os/exec';
import { findBusybox } from '../../electron/engine/os/busybox';

let dir: string;
const mounted = (target: string) =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === target);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'prfm-'));
});

afterAll(async () => {
  for (const t of ['busybox', 'util-linux'])
    if (mounted(join(dir, t, 'rootfs'))) await new HostRootfsMounter(new NodeProcessRunner()).unmount(join(dir, t, 'rootfs'));
  await rm(dir, { recursive: true, force: true });
});

describe('the rootfs overlay mount', async () => {
  const busybox = await findBusybox();
  const tools: Array<[string, () => Promise<string | undefined>]> = [['util-linux', async () => undefined]];
  if (busybox) tools.push(['busybox', async () => busybox]);
  it.each(tools)(
    'with %s mount/umount: the top layer shadows the lower, writes land in upper, and unmount leaves nothing',
    async (name, find) => {
      const base = join(dir, name);
      const [low, top, upper, work, target] = ['low', 'top', 'upper', 'work', 'rootfs'].map((d) => join(base, d));
      for (const d of [low!, top!, upper!, work!, target!]) await mkdir(d, { recursive: true });
      await writeFile(join(low!, 'f'), 'low');
      await writeFile(join(low!, 'only-low'), 'x');
      await writeFile(join(top!, 'f'), 'top');
      const mounter = new HostRootfsMounter(new NodeProcessRunner(), find);
      await mounter.mount({ lowers: [top!, low!], upper: upper!, work: work!, target: target! });
      expect(mounted(target!)).toBe(true);
      expect(await readFile(join(target!, 'f'), 'utf8')).toBe('top');
      expect(await readFile(join(target!, 'only-low'), 'utf8')).toBe('x');
      await writeFile(join(target!, 'new'), 'written');
      expect(await readFile(join(upper!, 'new'), 'utf8')).toBe('written');
      await mounter.unmount(target!);
      expect(mounted(target!)).toBe(false);
      // a second unmount is a no-op
      await mounter.unmount(target!);
    },
  );
});
