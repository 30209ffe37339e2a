/**
 * `tsx bench/probe-foreign.ts [--runs N]`: `probe` of a pod containerd made against the same probe of an equivalent
 * Podscope pod. Both pods have one host port (portmap), 10M each way (bandwidth) and no container, on a dual-stack
 * bridge network of the same shape (bridge + portmap + bandwidth, host-local with a range route), each network on
 * its own allocator lease; containerd is Debian's 1.6.20 from the test kit. The containerd pod is measured through
 * the foreign measurer as the app keeps it (built once per endpoint, each probe resolving the endpoint's pods
 * afresh from containerd's verbose status and libcni's cache), the Podscope pod through its engine. The two
 * alternate N times each; prints min/median/max and the ratio of the medians (target ≤ 1.2×), and the resolve's
 * own share (one snapshot of the endpoint). Needs root. Prints figures; asserts nothing.
 */
import { parseArgs } from 'node:util';
import { createRealEnv } from '../testkit/throwaway-env';
import { startContainerd } from '../testkit/containerd-fixture';
import { createForeignMeasurer } from '../electron/engine/api';
import { foreignSourceOf } from '../electron/endpoints/foreign-measurements';
import { leaseHost } from '../testkit/allocator';

const stat = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s[s.length - 1]! };
};
const fmt = (s: { min: number; median: number; max: number }) =>
  `min ${s.min.toFixed(0)} ms  median ${s.median.toFixed(0)} ms  max ${s.max.toFixed(0)} ms`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', short: 'n' } } });
  const runs = Number(values.runs ?? 7);
  const lease = leaseHost('bench probe-foreign');
  const env = await createRealEnv({ tag: 'pfb' });
  const ctd = await startContainerd({});
  try {
    const config = (name: string, hostPort: number) => ({
      metadata: { name, namespace: 'bench', uid: `u-${name}` },
      port_mappings: [{ container_port: 80, host_port: hostPort }],
      annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '10M' },
      // a resolv.conf naming no nameserver for both (the test kit's env gives the Podscope pod the same): this host's
      // nameserver is not an address a benchmark may send to, and a DNS timeout would be most of either figure
      dns_config: { servers: [], searches: [], options: ['ndots:1'] },
    });
    const engine = await env.engine({ probeOnReady: false });
    const own = (await engine.run({ config: config('own', env.port(0)) })).id;
    const foreign = (await ctd.api.run({ config: config('ctd', lease.port(0)) })).id;
    const version = await ctd.api.connect();
    const measurer = await createForeignMeasurer(foreignSourceOf(ctd.api, `${version.runtimeName} at ${ctd.api.address}`));
    try {
      // one of each first: nothing cached in either (plugins' binaries, node's agent script) counts
      await engine.probe(own);
      await measurer.probe(foreign);
      const ownMs: number[] = [];
      const foreignMs: number[] = [];
      const resolveMs: number[] = [];
      let paths = [0, 0];
      for (let i = 0; i < runs; i++) {
        let t0 = performance.now();
        const a = await engine.probe(own);
        ownMs.push(performance.now() - t0);
        t0 = performance.now();
        const b = await measurer.probe(foreign);
        foreignMs.push(performance.now() - t0);
        t0 = performance.now();
        await ctd.api.foreignSandboxes();
        resolveMs.push(performance.now() - t0);
        paths = [a.paths.filter((p) => p.measured).length, b.paths.filter((p) => p.measured).length];
      }
      const o = stat(ownMs);
      const f = stat(foreignMs);
      process.stdout.write(
        `# probe of a containerd pod vs an equivalent Podscope pod: ${paths[1]} vs ${paths[0]} measured paths, ${runs} runs each\n` +
          `Podscope pod   ${fmt(o)}\n` +
          `containerd pod ${fmt(f)}\n` +
          `  of which the endpoint's verbose statuses: ${fmt(stat(resolveMs))}\n` +
          `ratio of medians: ${(f.median / o.median).toFixed(2)}× (target ≤ 1.2×)\n`,
      );
    } finally {
      measurer.close();
      await ctd.api.stop(foreign).catch(() => undefined);
      await ctd.api.remove(foreign).catch(() => undefined);
      await engine.stop(own).catch(() => undefined);
      await engine.remove(own).catch(() => undefined);
      await engine.close();
    }
  } finally {
    await ctd.stop();
    await env.teardown();
    lease.release();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
