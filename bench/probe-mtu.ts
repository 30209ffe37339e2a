/**
 * `tsx bench/probe-mtu.ts [--runs N]`: the probe's time with and without the path MTU audit, for a pod with 12
 * measured paths (3 host-port mappings from 127.0.0.1 and the gateway, 1 container-port-only mapping, the gateway,
 * 2 peers both ways), all reachable and at full MTU (the common case: one echo per sender and destination).
 * Alternates the two N times each; prints p50/p95 and the ratio (target ≤ 1.2×). Subnets, bridge and host ports are
 * a lease of the test kit's allocator; the env is torn down at the end. Needs root. Prints figures; asserts nothing.
 */
import { parseArgs } from 'node:util';
import { createRealEnv } from '../testkit/throwaway-env';

const stat = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { p50: at(0.5), p95: at(0.95) };
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', short: 'n' } } });
  const runs = Number(values.runs ?? 5);
  const env = await createRealEnv({ tag: 'mtub', ipv4Only: true });
  try {
    const engine = await env.engine({ probeOnReady: false });
    const meta = (name: string) => ({ name, namespace: 'bench', uid: `u-${name}` });
    const { id } = await engine.run({
      config: {
        metadata: meta('web'),
        port_mappings: [
          { container_port: 8080, host_port: env.port(0) },
          { container_port: 8081, host_port: env.port(1) },
          { container_port: 8082, host_port: env.port(2) },
          { container_port: 9090, host_port: 0 },
        ],
      },
    });
    await engine.run({ config: { metadata: meta('peer1') } });
    await engine.run({ config: { metadata: meta('peer2') } });
    const without: number[] = [];
    const withAudit: number[] = [];
    let paths = 0;
    let audited = 0;
    let echoes = 0;
    for (let i = 0; i < runs; i++) {
      let t0 = performance.now();
      await engine.probe(id, { mtu: false });
      without.push(performance.now() - t0);
      t0 = performance.now();
      const r = await engine.probe(id);
      withAudit.push(performance.now() - t0);
      paths = r.paths.filter((p) => p.measured).length;
      audited = r.paths.filter((p) => p.mtu).length;
      echoes = r.paths.reduce((n, p) => n + (p.mtu?.probes ?? 0), 0);
    }
    const a = stat(without);
    const b = stat(withAudit);
    process.stdout.write(
      `# probe with and without the path MTU audit: ${paths} measured paths, ${audited} audited (${echoes} echoes counted per path), ${runs} runs each\n` +
        `probe without audit  p50 ${a.p50.toFixed(0)} ms  p95 ${a.p95.toFixed(0)} ms\n` +
        `probe with audit     p50 ${b.p50.toFixed(0)} ms  p95 ${b.p95.toFixed(0)} ms\n` +
        `ratio of p50: ${(b.p50 / a.p50).toFixed(2)}× (target ≤ 1.2×)\n`,
    );
  } finally {
    await env.teardown();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
