/**
 * A pause image built locally from Debian's static busybox, as a docker-archive tarball `ctr images import` accepts:
 * manifest.json + image config + one layer with /bin/busybox, /bin/sh and /bin/sleep. The entrypoint is a shell
 * that traps SIGTERM (PID 1 in its own pid namespace ignores signals it has no handler for) and sleeps forever.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PAUSE_IMAGE_REF = 'podscope.local/pause:busybox';
export const PAUSE_ENTRYPOINT = ['/bin/sh', '-c', "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"];

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Writes <dir>/pause-image.tar and returns its path. */
export function buildPauseImageTar(dir: string, busybox = '/bin/busybox'): string {
  const rootfs = join(dir, 'pause-rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  copyFileSync(busybox, join(rootfs, 'bin/busybox'));
  for (const applet of ['sh', 'sleep']) symlinkSync('busybox', join(rootfs, 'bin', applet));
  const out = join(dir, 'pause-image');
  mkdirSync(out);
  // fixed owner and mtime so the layer digest does not depend on who built it when
  execFileSync('tar', [
    '--numeric-owner',
    '--owner=0',
    '--group=0',
    '--mtime=@0',
    '--sort=name',
    '-C',
    rootfs,
    '-cf',
    join(out, 'layer.tar'),
    '.',
  ]);
  const layerDigest = sha256(readFileSync(join(out, 'layer.tar')));
  const config = JSON.stringify({
    architecture: process.arch === 'arm64' ? 'arm64' : 'amd64',
    os: 'linux',
    config: { Entrypoint: PAUSE_ENTRYPOINT, Env: ['PATH=/bin'], WorkingDir: '/' },
    rootfs: { type: 'layers', diff_ids: [`sha256:${layerDigest}`] },
  });
  const configName = `${sha256(config)}.json`;
  writeFileSync(join(out, configName), config);
  writeFileSync(join(out, 'manifest.json'), JSON.stringify([{ Config: configName, RepoTags: [PAUSE_IMAGE_REF], Layers: ['layer.tar'] }]));
  const tarPath = join(dir, 'pause-image.tar');
  execFileSync('tar', [
    '--numeric-owner',
    '--owner=0',
    '--group=0',
    '--mtime=@0',
    '-C',
    out,
    '-cf',
    tarPath,
    'manifest.json',
    configName,
    'layer.tar',
  ]);
  return tarPath;
}
