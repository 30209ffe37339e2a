/**
 * `tsx bench/probe-trace.ts [--runs N]`: the time of `probe --trace` beside a plain probe, for a pod with 2 host-port
 * mappings and 1 peer, one path failing (a foreign DROP rule in filter OUTPUT for the second mapping's container
 * port). Alternates plain and traced probes N times each; prints p50/p95 and the trace's extra time. A traced probe
 * includes everything a trace does: netfilter monitors, the kfree_skb tracefs instance and the seen-at tcpdump
 * captures on every hop (and the pcapng built from them). Needs root; own
 * bridge psc-trcb, 10.184.0.0/24 + fd00:184::/64; the DROP rule is removed and the env torn down at the end.
 * Prints figures; asserts nothing.
 */
import { execFileSync } from 'node:child_process';
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
  const env = await createRealEnv({ tag: 'trcb', subnet: 184, ipMasq: true });
  const hp = 26000 + Math.floor(Math.random() * 800);
  let rule: string[] | undefined;
  try {
    const engine = await env.engine({ probeOnReady: false });
    const meta = (name: string) => ({ name, namespace: 'bench', uid: `u-${name}` });
    const { id } = await engine.run({
      config: {
        metadata: meta('web'),
        port_mappings: [
          { container_port: 8080, host_port: hp },
          { container_port: 9090, host_port: hp + 1 },
        ],
      },
    });
    await engine.run({ config: { metadata: meta('peer') } });
    const ip = (await engine.status(id)).ip;
    rule = ['OUTPUT', '-d', `${ip}/32`, '-p', 'tcp', '--dport', '9090', '-m', 'comment', '--comment', 'bench-block', '-j', 'DROP'];
    execFileSync('iptables', ['-I', ...rule]);
    const plain: number[] = [];
    const traced: number[] = [];
    let paths = 0;
    let failing = 0;
    let steps = 0;
    let seenSteps = 0;
    let captured = '';
    for (let i = 0; i < runs; i++) {
      let t0 = performance.now();
      await engine.probe(id);
      plain.push(performance.now() - t0);
      t0 = performance.now();
      const r = await engine.probe(id, { trace: true });
      traced.push(performance.now() - t0);
      paths = r.paths.filter((p) => p.measured).length;
      failing = r.paths.filter((p) => p.measured && p.verdict !== 'reachable').length;
      steps = r.paths.reduce((n, p) => n + (p.trace?.steps.length ?? 0), 0);
      seenSteps = r.paths.reduce((n, p) => n + (p.trace?.steps.filter((s) => s.kind === 'seen').length ?? 0), 0);
      captured = r.capture
        ? `${r.capture.packets} packets on ${r.capture.interfaces.length} hops, pcapng ${Math.round((r.capture.pcapngBase64.length * 3) / 4 / 1024)} KiB`
        : 'no capture';
    }
    const a = stat(plain);
    const b = stat(traced);
    process.stdout.write(
      `# probe --trace vs probe: pod with 2 host-port mappings + 1 peer, ${paths} measured paths (${failing} failing), ${steps} trace steps, ${runs} runs each\n` +
        `probe          p50 ${a.p50.toFixed(0)} ms  p95 ${a.p95.toFixed(0)} ms\n` +
        `probe --trace  p50 ${b.p50.toFixed(0)} ms  p95 ${b.p95.toFixed(0)} ms  (seen-at captures on: ${seenSteps} seen steps, ${captured})\n` +
        `extra for the trace: p50 ${(b.p50 - a.p50).toFixed(0)} ms (target ≤ 2000 ms)\n`,
    );
  } finally {
    if (rule) execFileSync('iptables', ['-D', ...rule]);
    await env.teardown();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
