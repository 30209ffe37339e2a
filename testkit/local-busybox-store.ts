/**
 * A tiny ImageStore over one local busybox tree, for container tests that need a real rootfs but no registry: the
 * image `podscope.test/busybox:1` is a directory built from the host's static busybox (like the pause rootfs), with an
 * /etc/passwd (root, web 1000:1000), an /etc/group (web, staff 50 listing web) and /www/index.html; prepareRootfs copies
 * it into `<dir>/rootfs` (no overlayfs, so nothing to unmount) and counts users as the real store does.
 */
import { chmod, cp, mkdir, rm, symlink, writeFile, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerRootfs, ImageRecord, ImageStore } from '../electron/engine/images/types';

export const BUSYBOX_IMAGE = 'podscope.test/busybox:1';
export const INDEX_HTML = '<h1>hello from a podscope container</h1>\n';
const APPLETS = [
  'sh',
  'httpd',
  'sleep',
  'cat',
  'echo',
  'ls',
  'id',
  'grep',
  'kill',
  'hostname',
  'ps',
  'wget',
  'true',
  'false',
  'head',
  'dd',
  'env',
  'mkdir',
];

export async function buildBusyboxTree(dir: string, busybox = '/bin/busybox'): Promise<void> {
  for (const d of ['bin', 'etc', 'proc', 'sys', 'dev', 'tmp', 'www']) await mkdir(join(dir, d), { recursive: true, mode: 0o755 });
  await chmod(join(dir, 'tmp'), 0o1777);
  await copyFile(busybox, join(dir, 'bin/busybox'));
  await chmod(join(dir, 'bin/busybox'), 0o755);
  for (const a of APPLETS) await symlink('busybox', join(dir, 'bin', a));
  await writeFile(join(dir, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nweb:x:1000:1000:web:/www:/bin/sh\n');
  await writeFile(join(dir, 'etc/group'), 'root:x:0:\nstaff:x:50:web\nweb:x:1000:\n');
  await writeFile(join(dir, 'www/index.html'), INDEX_HTML);
  await chmod(join(dir, 'www/index.html'), 0o644);
}

export class LocalBusyboxStore implements ImageStore {
  readonly users = new Map<string, string>();
  readonly record: ImageRecord;

  constructor(
    private readonly tree: string,
    config: ImageRecord['config'] = { Cmd: ['sh'], Env: ['PATH=/bin'], WorkingDir: '/' },
  ) {
    this.record = {
      id: `sha256:${'b'.repeat(64)}`,
      repoTags: [BUSYBOX_IMAGE],
      repoDigests: [],
      size: 2_000_000,
      config,
      diffIds: [`sha256:${'c'.repeat(64)}`],
      os: 'linux',
      architecture: 'amd64',
      pinned: false,
      createdAt: new Date().toISOString(),
    };
  }

  async pull(): Promise<ImageRecord> {
    return this.record;
  }
  async load(): Promise<ImageRecord[]> {
    return [this.record];
  }
  async list(): Promise<ImageRecord[]> {
    return [this.record];
  }
  async resolve(ref: string): Promise<ImageRecord | undefined> {
    return ref === BUSYBOX_IMAGE || ref === this.record.id ? this.record : undefined;
  }
  async remove(): Promise<void> {}
  async fsInfo() {
    return { mountpoint: this.tree, usedBytes: 0, inodesUsed: 0, timestampNs: 0n };
  }
  async prepareRootfs(imageId: string, containerId: string, dir: string): Promise<ContainerRootfs> {
    const path = join(dir, 'rootfs');
    await cp(this.tree, path, { recursive: true, verbatimSymlinks: true });
    this.users.set(containerId, imageId);
    return {
      path,
      release: async () => {
        await rm(path, { recursive: true, force: true });
        this.users.delete(containerId);
      },
    };
  }
}
