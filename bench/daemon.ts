/** `podscope cri` in a process of its own for the benches, so the server never shares an event loop with the client timing it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RealEnv } from '../testkit/throwaway-env';

const CLI = fileURLToPath(new URL('../bin/podscope.mjs', import.meta.url));
const BUILD = fileURLToPath(new URL('../scripts/build-electron.mjs', import.meta.url));

export interface CriDaemon {
  socketPath: string;
  pid: number;
  stop(): Promise<void>;
}

let bundleBuilt: Promise<void> | undefined;

/** The CLI bundle (dist/cli), built once per bench run: the daemon runs what a production install runs. */
function buildBundle(): Promise<void> {
  bundleBuilt ??= new Promise<void>((resolve, reject) => {
    // esbuild's size report would land in the middle of the tables: shown only when the build fails
    const build = spawn(process.execPath, [BUILD], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    build.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    build.once('error', reject);
    build.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${BUILD} exited with ${code}: ${stderr.trim()}`))));
  });
  return bundleBuilt;
}

/** `nodeArgs`: flags for node itself (e.g. --cpu-prof); `engineArgs`: more engine flags, e.g. `--seccomp-profile-root DIR` */
export async function startCriDaemon(env: RealEnv, opts: { nodeArgs?: string[]; engineArgs?: string[] } = {}): Promise<CriDaemon> {
  await buildBundle();
  const o = env.options;
  const socketPath = join(env.dir, 'podscope.sock');
  const child = spawn(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      CLI,
      'cri',
      '--socket',
      socketPath,
      '--cni-conf-dir',
      o.cniConfDir!,
      '--cni-bin-dir',
      '/usr/lib/cni',
      '--cni-cache-dir',
      o.cniCacheDir!,
      '--state-dir',
      o.stateDir!,
      '--run-dir',
      o.runDir!,
      ...(opts.engineArgs ?? []),
    ],
    // the bundle, not the sources through tsx: what ships, at about half the resident memory (a fork copies it)
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, PODSCOPE_CLI: 'bundle' } },
  );
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(child.pid, 'SIGTERM');
    await exited;
  };
  try {
    await waitForSocket(socketPath, child);
  } catch (e) {
    await stop();
    throw e;
  }
  return { socketPath, pid: child.pid!, stop };
}

async function waitForSocket(path: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`podscope cri exited with ${child.exitCode} before serving ${path}`);
    if (
      await access(path).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`podscope cri did not create ${path} within 30 s`);
}

/** Resident set size of a process in MiB (VmRSS), undefined once it is gone. */
export async function rssMiB(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return m ? Number(m[1]) / 1024 : undefined;
}

/** The 1-minute load average, printed beside every table: on a shared host absolute figures mean little without it. */
export async function loadAverage(): Promise<string> {
  return (await readFile('/proc/loadavg', 'utf8').catch(() => '?')).split(' ').slice(0, 3).join(' ');
}

/** Runs fn over items with at most `limit` in flight. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
