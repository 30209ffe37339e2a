/**
 * `tsx bench/probe-agents.ts [--runs N]`: what one probe of a ready pod costs, wall and CPU, the CPU split into this
 * process (the engine, and the probe agents when they are its threads) and the processes it started (agents started
 * as processes, the spawn helper's commands). The pod has one host port (portmap) and a peer on its bridge, so a
 * probe opens agents in both pods' netns and in the host's. One unmeasured probe first; then N probes one after the
 * other. Needs root; the env is an allocator lease. Prints figures; asserts nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createRealEnv } from '../testkit/throwaway-env';

/** clock ticks a second (USER_HZ): what /proc/<pid>/stat counts CPU time in */
const HZ = 100;

/** fields 14–17 of /proc/<pid>/stat (utime, stime, cutime, cstime), in ticks; the comm field may hold spaces */
function statTimes(pid: number | 'self'): [number, number, number, number] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // after the comm: state is field 3, so utime (14) is index 11 here
    return [Number(f[11]), Number(f[12]), Number(f[13]), Number(f[14])];
  } catch {
    return undefined;
  }
}

/** the CPU ms of what this process started: its reaped children's, and its living children's with their own reaped ones */
function childrenCpuMs(): number {
  let ticks = 0;
  const own = statTimes('self')!;
  ticks += own[2] + own[3];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${d}/status`, 'utf8'))?.[1]);
      if (ppid !== process.pid) continue;
    } catch {
      continue;
    }
    const t = statTimes(Number(d));
    if (t) ticks += t[0] + t[1] + t[2] + t[3];
  }
  return (ticks * 1000) / HZ;
}

const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0]!.toFixed(0)}  median ${s[Math.floor(s.length / 2)]!.toFixed(0)}  max ${s[s.length - 1]!.toFixed(0)}`;
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string', short: 'n', default: '10' } } });
  const runs = Number(values.runs);
  const env = await createRealEnv({ tag: 'pab' });
  try {
    const engine = await env.engine({ probeOnReady: false });
    const pod = (name: string, ports: Array<{ container_port: number; host_port: number }> = []) => ({
      metadata: { name, namespace: 'bench', uid: `u-${name}` },
      port_mappings: ports,
    });
    const { id } = await engine.run({ config: pod('probed', [{ container_port: 80, host_port: env.port(0) }]) });
    await engine.run({ config: pod('peer') });
    const first = await engine.probe(id);
    console.log(`probe of a pod with 1 host port and 1 peer: ${first.paths.length} paths, errors ${JSON.stringify(first.errors)}`);
    const wall: number[] = [];
    const own: number[] = [];
    const children: number[] = [];
    for (let i = 0; i < runs; i++) {
      const [w0, o0, c0] = [performance.now(), ownCpuMs(), childrenCpuMs()];
      await engine.probe(id);
      // the agents are ended (and reaped) before probe() returns; the kept host agent is this process's or a child
      wall.push(performance.now() - w0);
      own.push(ownCpuMs() - o0);
      children.push(childrenCpuMs() - c0);
    }
    const total = own.map((o, i) => o + children[i]!);
    console.log(`${runs} probes (ms):`);
    console.log(`  wall                   ${stat(wall)}`);
    console.log(`  CPU, this process      ${stat(own)}`);
    console.log(`  CPU, what it started   ${stat(children)}`);
    console.log(`  CPU, both              ${stat(total)}`);
    await engine.close();
  } finally {
    await env.teardown();
  }
}

await main();
