/**
 * `tsx bench/probe-agents.ts [--runs N]`: what one probe of a ready pod costs, wall and CPU, the CPU split into this
 * process (the engine, and the probe agents when they are its threads) and the processes it started (agents started
 * as processes, the spawn helper's commands). The pod has one host port (portmap) and a peer on its bridge, so a
 * probe opens agents in both pods' netns and in the host's. One unmeasured probe first; then N probes one after the
 * other, for each way agents run (threads, and processes as PODSCOPE_PROBE_AGENTS=processes asks), alternating: two
 * engines on the same state dir (the second without the state dir lock), one probe of each in turn, so a machine's
 * changing load falls on both alike. Needs root; the env is an allocator lease. Prints figures; asserts nothing.
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
    // read when a probe net is made: the second engine's agents are processes (opened after the pods: it loads them)
    process.env.PODSCOPE_PROBE_AGENTS = 'processes';
    const processes = await env.engine({ probeOnReady: false }, { noLock: true });
    delete process.env.PODSCOPE_PROBE_AGENTS;
    const ways = { threads: engine, processes };
    const figures = Object.fromEntries(
      Object.keys(ways).map((k) => [k, { wall: [] as number[], own: [] as number[], children: [] as number[] }]),
    );
    for (const [way, e] of Object.entries(ways)) {
      const first = await e.probe(id);
      console.log(
        `${way}: probe of a pod with 1 host port and 1 peer: ${first.paths.length} paths, errors ${JSON.stringify(first.errors)}`,
      );
    }
    for (let i = 0; i < runs; i++) {
      for (const [way, e] of Object.entries(ways)) {
        const [w0, o0, c0] = [performance.now(), ownCpuMs(), childrenCpuMs()];
        await e.probe(id);
        // the agents are ended (and reaped) before probe() returns; the kept host agent is this process's or a child
        const f = figures[way]!;
        f.wall.push(performance.now() - w0);
        f.own.push(ownCpuMs() - o0);
        f.children.push(childrenCpuMs() - c0);
      }
    }
    for (const [way, f] of Object.entries(figures)) {
      console.log(`${runs} probes, agents as ${way} (ms):`);
      console.log(`  wall                   ${stat(f.wall)}`);
      console.log(`  CPU, this process      ${stat(f.own)}`);
      console.log(`  CPU, what it started   ${stat(f.children)}`);
      console.log(`  CPU, both              ${stat(f.own.map((o, i) => o + f.children[i]!))}`);
    }
    await processes.close();
    await engine.close();
  } finally {
    await env.teardown();
  }
}

await main();
