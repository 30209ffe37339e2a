/** In-memory SandboxFiles: tracks which sandboxes have files and a mounted shm; can fail on demand. */
import type { SandboxFiles } from '../../electron/engine/pods/context';

export class FakeSandboxFiles implements SandboxFiles {
  readonly prepared = new Set<string>();
  readonly shmMounted = new Set<string>();
  prepareError: Error | undefined;
  cleanupError: Error | undefined;

  async prepare({ rootDir, runDir }: { rootDir: string; runDir: string }) {
    const error = this.prepareError;
    this.prepareError = undefined;
    if (error) throw error;
    this.prepared.add(rootDir);
    this.shmMounted.add(runDir);
    return { resolvConfPath: `${rootDir}/resolv.conf`, shmPath: `${runDir}/shm` };
  }

  async cleanup({ rootDir, runDir }: { rootDir: string; runDir: string }) {
    const error = this.cleanupError;
    this.cleanupError = undefined;
    if (error) throw error;
    this.prepared.delete(rootDir);
    this.shmMounted.delete(runDir);
  }

  async unmountShm({ runDir }: { runDir: string }) {
    this.shmMounted.delete(runDir);
  }
}
