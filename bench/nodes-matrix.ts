/**
 * `tsx bench/nodes-matrix.ts [--runs N] [--trace]`: a full probe matrix of a kind-shaped cluster — 3 nodes (one in
 * its own mount and pid namespaces, one in its own mount namespace) × 3 pods each, 72 pod → pod cells — through
 * `podscope probe --matrix --all-nodes -o json` as a user runs it. Prints, per run and as p50/max: the matrix's own
 * time (durationMs: agents in 9 pods, responders, 72 connects, judging) and the command's wall time (discovery of
 * every node, a CRI connection each, the pods resolved, the matrix). Target: ≤ 5 s wall. The cluster comes from the
 * test kit (one allocator lease) and is torn down at the end. Needs root. Prints figures; asserts nothing.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import type { ProbeMatrix } from '../shared/domain/nodes';
import { startKindCluster } from '../testkit/kind-cluster';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PODS_PER_NODE = 3;

const stat = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length / 2)]!, max: s[s.length - 1]! };
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', short: 'n' }, trace: { type: 'boolean' } } });
  const runs = Number(values.runs ?? 5);
  const t0 = performance.now();
  const cluster = await startKindCluster([{}, { privateMount: true, ownPid: true }, { privateMount: true }]);
  try {
    for (const n of cluster.nodes)
      for (let i = 0; i < PODS_PER_NODE; i++) {
        const name = `m${n.index}-${i}`;
        await n.containerd.api.run({ config: { metadata: { name, namespace: 'bench', uid: name, attempt: 0 }, hostname: name } });
      }
    console.log(`cluster of ${cluster.nodes.length} nodes × ${PODS_PER_NODE} pods up in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const inner: number[] = [];
    const wall: number[] = [];
    for (let r = 0; r < runs; r++) {
      const w0 = performance.now();
      const args = ['bin/podscope.mjs', 'probe', '--matrix', '--all-nodes', '-o', 'json', ...(values.trace ? ['--trace'] : [])];
      const { stdout } = await run(process.execPath, args, { cwd: ROOT, maxBuffer: 64 << 20 }).catch((e: { stdout: string }) => ({
        stdout: e.stdout,
      }));
      const w = performance.now() - w0;
      const m = JSON.parse(stdout) as ProbeMatrix;
      const reachable = m.cells.filter((c) => c.verdict === 'reachable').length;
      inner.push(m.durationMs);
      wall.push(w);
      console.log(
        `run ${r + 1}: ${m.pods.length} pods, ${m.cells.length} cells (${reachable} reachable): matrix ${m.durationMs.toFixed(0)} ms, command ${w.toFixed(0)} ms` +
          (m.errors.length ? `; errors: ${m.errors.join('; ')}` : ''),
      );
    }
    const a = stat(inner);
    const b = stat(wall);
    console.log(`matrix   p50 ${a.p50.toFixed(0)} ms  max ${a.max.toFixed(0)} ms`);
    console.log(`command  p50 ${b.p50.toFixed(0)} ms  max ${b.max.toFixed(0)} ms  (target ≤ 5000 ms)`);
  } finally {
    await cluster.stop();
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
