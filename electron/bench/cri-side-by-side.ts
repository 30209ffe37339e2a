/**
 * `podscope bench --side-by-side`: the same sandbox lifecycle through the same CRI client against `podscope cri`
 * and against a containerd started for the run (Debian's 1.6, own dirs and socket), each on a conflist of its own
 * with the same plugins. Prints p50/p95 per op for both and the ratio Podscope/containerd.
 */
import { join } from 'node:path';
import { benchCriSideBySide } from '../cri/bench';
import { startCriServer } from '../cri/server';
import { createRealEnv } from '../engine/testing/throwaway-env';
// The containerd fixture is shared with the interop tests, which own it.
import { startContainerd } from '../../tests/cri/helpers/containerd-fixture';

export async function runCriSideBySide(opts: { n: number; out?: (line: string) => void }): Promise<void> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const env = await createRealEnv({ tag: 'sbs', subnet: 238 });
  let server: Awaited<ReturnType<typeof startCriServer>> | undefined;
  let containerd: Awaited<ReturnType<typeof startContainerd>> | undefined;
  try {
    const engine = await env.engine();
    server = await startCriServer({ engine, socketPath: join(env.dir, 'podscope.sock') });
    containerd = await startContainerd({ bridge: 'psc-ctdb', subnet: 239 });
    await benchCriSideBySide({
      podscopeSocket: server.socketPath,
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
    await server?.close();
    await containerd?.stop();
    await env.teardown();
  }
}
