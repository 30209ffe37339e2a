/**
 * `podscope bench --side-by-side`: the same sandbox lifecycle through the same CRI client against `podscope cri`
 * and against a containerd started for the run (Debian's 1.6, own dirs and socket), each on a conflist of its own
 * with the same plugins. Prints p50/p95 per op for both and the ratio Podscope/containerd.
 * Both servers run in processes of their own, so neither shares an event loop with the client doing the timing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchCriSideBySide } from './cri-bench';
import { createRealEnv } from '../testkit/throwaway-env';
// The containerd fixture is shared with the interop tests, which own it.
import { startContainerd } from '../testkit/containerd-fixture';

const CLI = fileURLToPath(new URL('../bin/podscope.mjs', import.meta.url));

export async function runCriSideBySide(opts: { n: number; out?: (line: string) => void }): Promise<void> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const env = await createRealEnv({ tag: 'sbs', subnet: 238 });
  let daemon: ChildProcess | undefined;
  let containerd: Awaited<ReturnType<typeof startContainerd>> | undefined;
  try {
    const o = env.options;
    const socketPath = join(env.dir, 'podscope.sock');
    daemon = spawn(process.execPath, [CLI, 'cri', '--socket', socketPath, '--cni-conf-dir', o.cniConfDir!, '--cni-bin-dir', '/usr/lib/cni', '--cni-cache-dir', o.cniCacheDir!, '--state-dir', o.stateDir!, '--run-dir', o.runDir!], { stdio: ['ignore', 'ignore', 'inherit'] });
    await waitForSocket(socketPath, daemon);
    containerd = await startContainerd({ bridge: 'psc-ctdb', subnet: 239 });
    await benchCriSideBySide({
      podscopeSocket: socketPath,
      containerdSocket: containerd.socketPath,
      n: opts.n,
      config: (i, runtime) => ({
        metadata: { name: `sbs-${i}`, namespace: 'podscope-bench', uid: `${runtime}-${i}` },
        port_mappings: [{ container_port: 80, host_port: (runtime === 'podscope' ? 32000 : 33000) + i }],
        annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
      }),
      print: out,
    });
  } finally {
    if (daemon?.exitCode === null && daemon.pid) {
      const exited = new Promise((r) => daemon!.once('exit', r));
      process.kill(daemon.pid, 'SIGTERM');
      await exited;
    }
    await containerd?.stop();
    await env.teardown();
  }
}

async function waitForSocket(path: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`podscope cri exited with ${child.exitCode} before serving ${path}`);
    if (await access(path).then(() => true, () => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`podscope cri did not create ${path} within 15 s`);
}
