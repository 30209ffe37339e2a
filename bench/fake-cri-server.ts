/**
 * `podscope cri` over the touch-point fakes, in a process of its own, for the read-path bench (cri-floor.ts): the
 * real engine, store, indexes, CRI adapters and grpc-js server, with netns, CNI plugins, runc and the per-sandbox
 * files simulated, so 1,000 pods with a running container each cost no host resources. The OS reads a real status
 * makes per call, the pause or container pid's /proc/<pid>/stat or a kill(0), are made here too (of this process).
 * Prints "ready" on stdout once serving; SIGTERM ends it. With `--profile-dir DIR`, each SIGUSR2 starts or ends a V8 CPU
 * profile written to DIR, so a profile covers the timed calls only, not setting up 1,000 pods.
 * `tsx bench/fake-cri-server.ts <socket> [--profile-dir DIR]`.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { createTestEngine } from '../testkit/fakes/test-engine';
import { startCriServer } from '../electron/cri/server';
import { isProcessAlive, processExists } from '../electron/engine/common/proc';

export const FAKE_IMAGE = 'podscope.test/busybox:1';

async function main(): Promise<void> {
  const socketPath = process.argv[2];
  if (!socketPath) throw new Error('usage: fake-cri-server.ts <socket>');
  // a real /proc read or kill(0) wherever the real engine makes one (the fakes answer from memory)
  const te = await createTestEngine({
    tmpPrefix: 'podscope-pfl-floor-',
    livenessHooks: { alive: () => void isProcessAlive(process.pid), exists: () => void processExists(process.pid) },
  });
  await te.loadImage(FAKE_IMAGE, { config: { Cmd: ['sh'] } });
  const server = await startCriServer({ engine: te.engine, socketPath, runtimeVersion: 'fakes' });
  const profileDir = process.argv.includes('--profile-dir') ? process.argv[process.argv.indexOf('--profile-dir') + 1] : undefined;
  const profileWritten = profileDir ? profileOnSignal(profileDir) : () => Promise.resolve();
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await profileWritten();
  await server.close();
  await te.close();
}

/** SIGUSR2 starts a CPU profile; the next one writes it to dir/fakes-<n>.cpuprofile. Returns: wait for the last write. */
function profileOnSignal(dir: string): () => Promise<void> {
  const session = new Session();
  session.connect();
  let running = false;
  let n = 0;
  let last: Promise<void> = Promise.resolve();
  process.on('SIGUSR2', () => {
    last = (async () => {
      if (!running) {
        running = true;
        await session.post('Profiler.enable');
        await session.post('Profiler.start');
        return;
      }
      running = false;
      const { profile } = await session.post('Profiler.stop');
      await writeFile(join(dir, `fakes-${++n}.cpuprofile`), JSON.stringify(profile));
    })();
  });
  return () => last;
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`fake-cri-server: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
