/**
 * `npm run bench` side by side: the same sandbox lifecycle through the same CRI client against `podscope cri` and
 * against a containerd started for the run (Debian's 1.6, own dirs and socket), each on a conflist of its own with
 * the same plugins. Prints p50/p95 per op for both and the ratio Podscope/containerd, then M concurrent runs and
 * removes (wall and p50, pod IPs checked for duplicates).
 * Both servers run in processes of their own, so neither shares an event loop with the client doing the timing.
 */
import { benchCriSideBySide, type BenchResult } from './cri-bench';
import { loadAverage, startCriDaemon } from './daemon';
import { createRealEnv } from '../testkit/throwaway-env';
// The containerd fixture is shared with the interop tests, which own it.
import { startContainerd } from '../testkit/containerd-fixture';

export async function runCriSideBySide(opts: { n: number; concurrent?: number; out?: (line: string) => void }): Promise<BenchResult> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const env = await createRealEnv({ tag: 'sbs', subnet: 238 });
  let daemon: Awaited<ReturnType<typeof startCriDaemon>> | undefined;
  let containerd: Awaited<ReturnType<typeof startContainerd>> | undefined;
  try {
    daemon = await startCriDaemon(env);
    containerd = await startContainerd({ bridge: 'psc-ctdb', subnet: 239 });
    const load0 = await loadAverage();
    const result = await benchCriSideBySide({
      podscopeSocket: daemon.socketPath,
      containerdSocket: containerd.socketPath,
      n: opts.n,
      concurrent: opts.concurrent ?? 10,
      config: (i, runtime) => ({
        metadata: { name: `sbs-${i}`, namespace: 'podscope-bench', uid: `${runtime}-${i}` },
        port_mappings: [{ container_port: 80, host_port: (runtime === 'podscope' ? 32000 : 33000) + i }],
        annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
      }),
      print: out,
    });
    out(`load average: ${load0} before, ${await loadAverage()} after`);
    return result;
  } finally {
    await daemon?.stop();
    await containerd?.stop();
    await env.teardown();
  }
}
