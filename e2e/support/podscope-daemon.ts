/**
 * A second Podscope engine served over CRI (`podscope cri --socket …`) as a child process, with its own temp dirs
 * and an empty conf dir (its pods use the host network, so it needs no bridge). The dead-endpoint spec kills it by
 * pid to play a CRI daemon that died, and starts it again on the same socket. `dispose` brings it back if needed,
 * removes every sandbox it holds through its own CLI, then stops it and removes its temp dir.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { E2E_TMP_PREFIX } from './sandbox-env';
import { teardownSteps } from './attempts';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/podscope.mjs', import.meta.url));

export interface PodscopeDaemon {
  socketPath: string;
  pid(): number | undefined;
  /** SIGKILL by pid: no goodbye on the socket, as a crashed daemon */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** runs the podscope CLI against this daemon */
  cli(args: string[]): Promise<string>;
  dispose(): Promise<string[]>;
}

export async function startPodscopeDaemon(): Promise<PodscopeDaemon> {
  const root = mkdtempSync(join(tmpdir(), `${E2E_TMP_PREFIX}crid-`));
  const dirs = {
    state: join(root, 'state'),
    run: join(root, 'run'),
    netns: join(root, 'netns'),
    conf: join(root, 'net.d'),
    cache: join(root, 'cache'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  const socketPath = join(root, 'cri.sock');
  const engineFlags = [
    '--state-dir',
    dirs.state,
    '--run-dir',
    dirs.run,
    '--netns-dir',
    dirs.netns,
    '--cni-conf-dir',
    dirs.conf,
    '--cni-cache-dir',
    dirs.cache,
    '--cni-bin-dir',
    '/usr/lib/cni',
  ];
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = async () => {
    rmSync(socketPath, { force: true });
    const c = spawn(process.execPath, [BIN, 'cri', '--socket', socketPath, ...engineFlags], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    c.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    exited = new Promise<void>((res) => c.once('exit', () => res()));
    child = c;
    const deadline = Date.now() + 30_000;
    while (!existsSync(socketPath)) {
      if (c.exitCode !== null) throw new Error(`podscope cri exited (${c.exitCode}): ${stderr}`);
      if (Date.now() > deadline) throw new Error(`podscope cri did not create ${socketPath}: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const kill = async () => {
    const c = child;
    if (!c?.pid || c.exitCode !== null) return;
    process.kill(c.pid, 'SIGKILL');
    await exited;
  };
  const cli = async (args: string[]) => (await run(process.execPath, [BIN, ...args, '--endpoint', `unix://${socketPath}`])).stdout;
  await start();
  return {
    socketPath,
    pid: () => child?.pid,
    kill,
    start,
    cli,
    async dispose() {
      const { attempt, problems } = teardownSteps();
      if (!child || child.exitCode !== null) await attempt('restart to clean up', start);
      await attempt('remove its sandboxes', async () => {
        const ids = (await cli(['pods', '-q']))
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean);
        for (const id of ids) {
          await cli(['stopp', id]);
          await cli(['rmp', id]);
        }
      });
      await attempt('stop the daemon', async () => {
        const c = child;
        if (c?.pid && c.exitCode === null) {
          process.kill(c.pid, 'SIGTERM');
          await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
          if (c.exitCode === null) await kill();
        }
      });
      await attempt('unmount and remove its temp dir', async () => {
        await run('sh', ['-c', `grep -o " ${root}[^ ]*" /proc/self/mounts | sort -r | xargs -r -n1 umount -l`]).catch(() => undefined);
        rmSync(root, { recursive: true, force: true });
      });
      return problems;
    },
  };
}
