/**
 * CreateContainer + StartContainer over CRI against any runtimes already serving (e.g. `podscope cri` and containerd
 * started by scripts/critest-env.ts): per endpoint, one pod, then N rounds of create + start of the same image running
 * `sleep 3600` (each container stopped and removed after its round, outside the timing), then the pod removed.
 * Endpoints take turns round by round so load on the shared cores hits both alike. Prints p50/p95; asserts nothing.
 *
 *   npx tsx bench/container-start.ts -n 20 --image registry.k8s.io/e2e-test-images/busybox:1.29-2 \
 *     --endpoint unix:///tmp/x/podscope.sock --endpoint unix:///tmp/y/containerd.sock
 */
import { parseArgs } from 'node:util';
import { createCriEndpointApi, type CriEndpointApi } from '../electron/cri/client';
import { fmt, percentile } from './stats';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { endpoint: { type: 'string', multiple: true }, image: { type: 'string' }, n: { type: 'string', short: 'n' } },
  });
  const endpoints = values.endpoint ?? [];
  const n = Number(values.n ?? 20);
  if (endpoints.length === 0 || !values.image || !Number.isInteger(n) || n < 1) {
    process.stdout.write('npx tsx bench/container-start.ts -n N --image REF --endpoint unix:///PATH [--endpoint …]\n');
    return 2;
  }
  const image = values.image;
  const runs = endpoints.map((endpoint, i) => ({
    endpoint,
    api: createCriEndpointApi(endpoint, { connectTimeoutMs: 2000, callTimeoutMs: 120_000 }) as CriEndpointApi,
    podId: '',
    tag: `cs${i}`,
    ms: [] as number[],
  }));
  const podConfig = (tag: string) => ({
    metadata: { name: `bench-${tag}`, namespace: 'bench', uid: `bench-${tag}-${process.pid}` },
    log_directory: `/tmp/pscr-bench-logs/${tag}`,
  });
  try {
    for (const r of runs) ({ id: r.podId } = await r.api.run({ config: podConfig(r.tag) }));
    for (let round = 0; round < n + 1; round++) {
      for (const r of runs) {
        const config = {
          metadata: { name: `c${round}` },
          image: { image },
          command: ['sleep', '3600'],
          log_path: `c${round}.log`,
        };
        const t0 = performance.now();
        const { id } = await r.api.createContainer({ podSandboxId: r.podId, config, sandboxConfig: podConfig(r.tag) });
        await r.api.startContainer(id);
        const ms = performance.now() - t0;
        if (round > 0) r.ms.push(ms); // round 0 warms caches (image unpack, first shim) on both sides
        await r.api.stopContainer(id, 0);
        await r.api.removeContainer(id);
      }
    }
  } finally {
    for (const r of runs) {
      if (r.podId) await r.api.remove(r.podId).catch((e: unknown) => process.stderr.write(`remove pod: ${String(e)}\n`));
      r.api.close();
    }
  }
  process.stdout.write(`CreateContainer+StartContainer, ${image}, sleep 3600, n=${n} (after 1 warm-up), ms\n`);
  process.stdout.write(`${'endpoint'.padEnd(60)}  ${'p50'.padStart(8)}  ${'p95'.padStart(8)}  ${'min'.padStart(8)}\n`);
  for (const r of runs)
    process.stdout.write(
      `${r.endpoint.padEnd(60)}  ${fmt(percentile(r.ms, 50)).padStart(8)}  ${fmt(percentile(r.ms, 95)).padStart(8)}  ${fmt(Math.min(...r.ms)).padStart(8)}\n`,
    );
  return 0;
}

process.exitCode = await main();
