/** SandboxFiles over the runtime layer's file and shm helpers. */
import { join } from 'node:path';
import { NamespaceMode } from '../../../shared/domain/config';
import type { ProcessRunner } from '../os/exec';
import {
  defaultHostFiles,
  mountShm,
  removeSandboxFiles,
  unmountShm,
  writeSandboxFiles,
  type HostFiles,
  type SandboxPaths,
} from '../runtime/sandbox-files';
import type { SandboxFiles } from './context';

function paths(rootDir: string, runDir: string): SandboxPaths {
  return {
    filesDir: rootDir,
    runtimeDir: runDir,
    hostname: join(rootDir, 'hostname'),
    hosts: join(rootDir, 'hosts'),
    resolvConf: join(rootDir, 'resolv.conf'),
    shm: join(runDir, 'shm'),
    bundle: join(runDir, 'bundle'),
  };
}

export function hostSandboxFiles(runner: ProcessRunner, host: HostFiles = defaultHostFiles()): SandboxFiles {
  return {
    async prepare({ config, rootDir, runDir, signal }) {
      const p = paths(rootDir, runDir);
      await writeSandboxFiles(p, config, host);
      // a host-IPC pod binds the host's /dev/shm (containerd does the same), so its own tmpfs would go unused
      if (config.linux?.security_context?.namespace_options?.ipc === NamespaceMode.NODE)
        return { resolvConfPath: p.resolvConf, shmPath: '/dev/shm' };
      try {
        await mountShm(runner, p.shm, signal);
      } catch (e) {
        await removeSandboxFiles(runner, p).catch(() => undefined);
        throw e;
      }
      return { resolvConfPath: p.resolvConf, shmPath: p.shm };
    },
    cleanup: ({ rootDir, runDir }) => removeSandboxFiles(runner, paths(rootDir, runDir)),
    unmountShm: ({ runDir }) => unmountShm(runner, join(runDir, 'shm')),
  };
}
