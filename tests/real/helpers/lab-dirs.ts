/**
 * The throwaway dirs and host names of a real CNI-lab test: engine options rooted in one temp dir, the leak scope of
 * what a lab run can leave (the bridge, the subnet, the lab's own CNI cache, the netns dir), and the cleanup that
 * runs whether the test passed or not.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineOptions } from '../../../electron/engine/common/options';
import { sweepLeftovers, type LeakScope } from '../../../testkit/leak-check';
import { TEST_RESOLV_CONF } from '../../../testkit/test-resolv-conf';

export interface LabDirs {
  readonly dir: string;
  scope(): LeakScope;
  options(): Partial<EngineOptions> & Pick<EngineOptions, 'stateDir' | 'runDir' | 'netnsDir' | 'cniConfDir' | 'cniCacheDir'>;
  dropBridge(): void;
  create(prefix: string): Promise<void>;
  /** sweeps what is left, drops the bridge, unmounts the netns dir and removes the temp dir */
  destroy(): Promise<void>;
}

export function labDirs(names: { bridge: string; subnet: string; network: string }): LabDirs {
  let dir = '';
  const dirs: LabDirs = {
    get dir() {
      return dir;
    },
    scope: () => ({
      bridge: names.bridge,
      subnets: [names.subnet],
      networks: [names.network],
      ipamDir: join(dir, 'ipam'),
      cacheDir: join(dir, 'state', 'lab', 'cni-cache'),
      netnsDir: join(dir, 'netns'),
      ownsDirs: true,
    }),
    options: () => ({
      stateDir: join(dir, 'state'),
      runDir: join(dir, 'run'),
      netnsDir: join(dir, 'netns'),
      cniConfDir: join(dir, 'net.d'),
      resolvConf: TEST_RESOLV_CONF,
      cniBinDirs: ['/usr/lib/cni'],
      cniCacheDir: join(dir, 'cache'),
      pluginTimeoutMs: 30_000,
    }),
    dropBridge: () => {
      try {
        execFileSync('ip', ['link', 'del', names.bridge], { stdio: 'ignore' });
      } catch {
        // not there
      }
    },
    async create(prefix) {
      dir = await mkdtemp(prefix);
    },
    async destroy() {
      if (!dir) return;
      sweepLeftovers(dirs.scope());
      dirs.dropBridge();
      // the netns manager made the dir a shared mount point (as iproute2 does for /var/run/netns)
      try {
        execFileSync('umount', ['-l', join(dir, 'netns')], { stdio: 'ignore' });
      } catch {
        // never mounted
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  return dirs;
}
