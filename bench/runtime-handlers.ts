/**
 * The container verbs per runtime handler, beside containerd: `podscope cri` (its own process) with a pod on runc and
 * a pod on crun (runtime_handler), and a containerd 1.6 started for the run (its shim + runc), all driven over CRI by
 * the same client on the same busybox image, host-network pods so only the container path is compared; each
 * Podscope container is watched by conmon. Rounds take
 * turns side by side; each round creates+starts a `sleep` container, stops it (timeout 0) and removes it, timed
 * apart. Then K containers per side run at once and the memory of what watches them is read from /proc (monitor RSS:
 * Podscope's conmon per container; containerd's shim of the pod,
 * shared by its containers). Prints medians and ratios; asserts nothing. Needs root, runc, crun and containerd.
 *
 *   npx tsx bench/runtime-handlers.ts [-n 15] [-k 5] [--names psrt-b --subnets 113,112]
 *
 * Names: bridges <names> and <names>ctd (default psrt-b, psrt-ctd), subnets 10.<a|b>.0.0/24 for the engine and
 * containerd (default 113, 112), temp dirs /tmp/prtb-*.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createCriEndpointApi, type CriEndpointApi } from '../electron/cri/client';
import { LocalImageStore } from '../electron/engine/images';
import { NodeProcessRunner } from '../electron/engine/os/exec';
import { ociRuntimeBinary, type RuntimeHandlerName } from '../electron/engine/runtime/oci-runtime';
import { buildBusyboxTree } from '../testkit/local-busybox-store';
import { buildBusyboxImage, writeDockerSave } from '../testkit/busybox-image';
import { startContainerd, type ContainerdFixture } from '../testkit/containerd-fixture';
import { createRealEnv, type RealEnv } from '../testkit/throwaway-env';
import { loadAverage, startCriDaemon, type CriDaemon } from './daemon';
import { fmt, percentile } from './stats';

const REF = 'podscope.test/busybox:1';

/** runs a command to its end; rejects on a non-zero exit */
function execFileAsync(file: string, args: string[], opts: { stdio: 'ignore' }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, opts);
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')}: exit ${code}`))));
  });
}

interface Side {
  name: string;
  api: CriEndpointApi;
  runtimeHandler: string;
  podId: string;
  ms: { start: number[]; stop: number[]; remove: number[] };
  /** what the monitors of K running containers hold, per container, MiB */
  monitorMemory?: MonitorMemory;
}

interface Proc {
  pid: number;
  cmdline: string;
}

/**
 * RSS counts every page the process maps, including libc's and the other shared libraries' pages that every process
 * on the host maps too; PSS divides each shared page among the processes mapping it; USS (private clean + dirty) is
 * what the process alone holds: what one more container adds.
 */
interface MonitorMemory {
  rss: number;
  pss: number;
  uss: number;
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      out.push({ pid: Number(d), cmdline: readFileSync(`/proc/${d}/cmdline`, 'latin1').replace(/\0/g, ' ') });
    } catch {
      /* gone */
    }
  }
  return out;
}

/** kB fields of /proc/<pid>/smaps_rollup (0 for a process gone meanwhile) */
function smapsRollup(pid: number): MonitorMemory {
  let text = '';
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    /* gone */
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return { rss: kb('Rss'), pss: kb('Pss'), uss: kb('Private_Clean') + kb('Private_Dirty') };
}

/**
 * What watches the containers, in MiB per container. Podscope: each container's conmon (`conmon … -c <id> …`; the
 * runtime's create and start have exited). containerd: every containerd-shim-runc-v2 whose argv names the pod (one
 * per pod), divided by the containers in it.
 */
function monitorMemory(side: Side, ids: string[]): MonitorMemory {
  const procs = processes();
  const monitors =
    side.name === 'containerd'
      ? procs.filter((p) => p.cmdline.includes('containerd-shim-runc-v2') && p.cmdline.includes(side.podId))
      : ids.flatMap((id) => procs.filter((p) => p.cmdline.startsWith('conmon ') && p.cmdline.includes(` -c ${id} `)).slice(0, 1));
  const sum: MonitorMemory = { rss: 0, pss: 0, uss: 0 };
  for (const p of monitors) {
    const m = smapsRollup(p.pid);
    sum.rss += m.rss;
    sum.pss += m.pss;
    sum.uss += m.uss;
  }
  const perContainer = (kib: number) => kib / 1024 / ids.length;
  return { rss: perContainer(sum.rss), pss: perContainer(sum.pss), uss: perContainer(sum.uss) };
}

function podConfig(name: string) {
  return {
    metadata: { name, namespace: 'podscope-bench', uid: `${name}-uid` },
    hostname: '',
    linux: { security_context: { namespace_options: { network: 2 } } },
  };
}

async function oneRound(side: Side, i: number): Promise<void> {
  const pod = podConfig(side.name);
  const config = { metadata: { name: `c${i}` }, image: { image: REF }, command: ['sleep', '3600'] };
  let t0 = performance.now();
  const { id } = await side.api.createContainer({ podSandboxId: side.podId, config, sandboxConfig: pod });
  await side.api.startContainer(id);
  const start = performance.now() - t0;
  t0 = performance.now();
  await side.api.stopContainer(id, 0);
  const stop = performance.now() - t0;
  t0 = performance.now();
  await side.api.removeContainer(id);
  const remove = performance.now() - t0;
  if (i > 0) {
    // round 0 warms caches (the first shim, the image's rootfs) on every side
    side.ms.start.push(start);
    side.ms.stop.push(stop);
    side.ms.remove.push(remove);
  }
}

/**
 * The floor under create+start: the runtime alone (`<runtime> create` then `start`, as conmon and the engine run
 * them, crun with the same cgroup-hiding wrapper on a hybrid host), from this process, on the very spec the engine
 * wrote for a container of that side's pod (its seccomp filter, masked paths, the pod's namespaces to join), with the
 * rootfs swapped for a plain busybox tree: no CRI, no conmon, no rootfs mount, no state. Killed and deleted outside
 * the timing.
 */
async function runtimeFloor(handler: RuntimeHandlerName, dir: string, n: number, engineSpec: string): Promise<number[]> {
  const bin = ociRuntimeBinary(handler, { runcPath: 'runc', crunPath: 'crun' });
  const wrapper = await bin.runWrapper();
  const bundle = join(dir, `floor-${handler}`);
  const root = join(dir, `floor-${handler}-root`);
  await buildBusyboxTree(join(bundle, 'rootfs'));
  const spec = JSON.parse(engineSpec) as {
    process: { terminal: boolean };
    root: { path: string; readonly: boolean };
    linux: { cgroupsPath?: string };
  };
  spec.root = { path: join(bundle, 'rootfs'), readonly: false };
  spec.process.terminal = false;
  const ms: number[] = [];
  for (let i = 0; i <= n; i++) {
    const id = `podscope-floor-${handler}-${process.pid}-${i}`;
    // under the engine's own parent, so no new cgroup directory is left behind
    spec.linux.cgroupsPath = `/podscope/${id}`;
    writeFileSync(join(bundle, 'config.json'), JSON.stringify(spec));
    const t0 = performance.now();
    const create = [...wrapper, bin.path, '--root', root, 'create', '--bundle', bundle, id];
    await execFileAsync(create[0]!, create.slice(1), { stdio: 'ignore' });
    await execFileAsync(bin.path, ['--root', root, 'start', id], { stdio: 'ignore' });
    if (i > 0) ms.push(performance.now() - t0);
    await execFileAsync(bin.path, ['--root', root, 'delete', '--force', id], { stdio: 'ignore' });
  }
  return ms;
}

/** the config.json the engine wrote for a container in the side's pod (created and removed for this) */
async function engineSpecOf(side: Side, runDir: string): Promise<string> {
  const config = { metadata: { name: 'floor-spec' }, image: { image: REF }, command: ['sleep', '3600'] };
  const { id } = await side.api.createContainer({ podSandboxId: side.podId, config, sandboxConfig: podConfig(side.name) });
  try {
    await side.api.startContainer(id);
    return readFileSync(join(runDir, 'containers', id, 'bundle', 'config.json'), 'utf8');
  } finally {
    await side.api.removeContainer(id);
  }
}

async function memoryRound(side: Side, k: number): Promise<void> {
  const pod = podConfig(side.name);
  const ids: string[] = [];
  try {
    for (let i = 0; i < k; i++) {
      const config = { metadata: { name: `m${i}` }, image: { image: REF }, command: ['sleep', '3600'] };
      const { id } = await side.api.createContainer({ podSandboxId: side.podId, config, sandboxConfig: pod });
      await side.api.startContainer(id);
      ids.push(id);
    }
    await new Promise((r) => setTimeout(r, 500));
    side.monitorMemory = monitorMemory(side, ids);
  } finally {
    for (const id of ids) await side.api.removeContainer(id).catch(() => undefined);
  }
}

export async function runRuntimeHandlerBench(opts: {
  n: number;
  k: number;
  /** bridge name prefix and the engines' and containerd's subnet numbers, for a run on host resources of its own */
  names?: string;
  subnets?: [number, number];
  out?: (line: string) => void;
}): Promise<Side[]> {
  const names = opts.names ?? 'psrt-b';
  const [subnet, ctdSubnet] = opts.subnets ?? [113, 112];
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const dir = await mkdtemp(join(tmpdir(), 'prtb-'));
  let ctd: ContainerdFixture | undefined;
  let env: RealEnv | undefined;
  let daemon: CriDaemon | undefined;
  const sides: Side[] = [];
  try {
    const tar = join(dir, 'busybox.tar');
    writeDockerSave(tar, [{ image: buildBusyboxImage(), repoTags: [REF] }]);
    ctd = await startContainerd({ bridge: opts.names ? `${names}ctd` : 'psrt-ctd', subnet: ctdSubnet, tempPrefix: 'prtb-ctd-' });
    execFileSync('/usr/bin/ctr', ['-a', ctd.socketPath, '-n', 'k8s.io', 'images', 'import', tar], { stdio: ['ignore', 'pipe', 'pipe'] });
    env = await createRealEnv({ tag: 'prtb', subnet, bridge: names, tempPrefix: 'prtb-env-' });
    const images = await LocalImageStore.open({ root: join(env.dir, 'state', 'images'), runner: new NodeProcessRunner() });
    await images.load(tar);
    daemon = await startCriDaemon(env);
    const podscope = createCriEndpointApi(`unix://${daemon.socketPath}`, { connectTimeoutMs: 2000, callTimeoutMs: 120_000 });
    for (const [name, api, runtimeHandler] of [
      ['podscope runc', podscope, ''],
      ['podscope crun', podscope, 'crun'],
      ['containerd', ctd.api, ''],
    ] as const) {
      const { id } = await api.run({ config: podConfig(name.replace(' ', '-')), runtimeHandler });
      sides.push({ name, api, runtimeHandler, podId: id, ms: { start: [], stop: [], remove: [] } });
    }
    const load0 = await loadAverage();
    for (let round = 0; round < opts.n + 1; round++) for (const s of sides) await oneRound(s, round);
    for (const s of sides) await memoryRound(s, opts.k);
    const floors: Record<'runc' | 'crun', number[]> = { runc: [], crun: [] };
    for (const s of sides.filter((x) => x !== sides.find((c) => c.name === 'containerd'))) {
      const handler = s.runtimeHandler === 'crun' ? 'crun' : 'runc';
      floors[handler] = await runtimeFloor(handler, dir, opts.n, await engineSpecOf(s, env.options.runDir!));
    }
    const ctdSide = sides.find((s) => s.name === 'containerd')!;
    const p50 = (v: number[]) => percentile(v, 50);
    out(`container verbs per runtime handler over CRI, busybox sleep, host-network pods, n=${opts.n} (after 1 warm-up), p50 ms`);
    out(
      `${'side'.padEnd(16)}${'create+start'.padStart(14)}${'stop'.padStart(10)}${'remove'.padStart(10)}   monitor MiB/ctr: RSS  PSS  USS`,
    );
    for (const s of sides) {
      const m = s.monitorMemory;
      const mem = m ? [m.rss, m.pss, m.uss].map((v) => v.toFixed(2).padStart(5)).join('') : '';
      out(
        `${s.name.padEnd(16)}${fmt(p50(s.ms.start)).padStart(14)}${fmt(p50(s.ms.stop)).padStart(10)}${fmt(p50(s.ms.remove)).padStart(10)}${' '.repeat(17)}${mem}`,
      );
    }
    out('ratio to containerd (p50)');
    for (const s of sides.filter((x) => x !== ctdSide)) {
      const r = (k: 'start' | 'stop' | 'remove') => (p50(s.ms[k]) / p50(ctdSide.ms[k])).toFixed(2);
      out(`${s.name.padEnd(16)}${`${r('start')}x`.padStart(14)}${`${r('stop')}x`.padStart(10)}${`${r('remove')}x`.padStart(10)}`);
    }
    out(
      `floor: the runtime's own create+start on the engine's spec over a plain busybox tree (no CRI, conmon, rootfs mount or state), p50 ms`,
    );
    for (const s of sides.filter((x) => x !== ctdSide)) {
      const floor = p50(floors[s.runtimeHandler === 'crun' ? 'crun' : 'runc']);
      out(
        `${s.name.padEnd(16)}${fmt(floor).padStart(14)}   the engine's part: ${fmt(p50(s.ms.start) - floor)} ms; containerd's part over runc's floor: ${fmt(p50(ctdSide.ms.start) - p50(floors.runc))} ms`,
      );
    }
    out(
      `monitor memory: ${opts.k} containers running per side, from smaps_rollup; RSS counts the shared libraries' pages every process maps (libc alone is about 1.1 MiB of conmon's), PSS shares them out, USS is what one more container adds; load average ${load0} before, ${await loadAverage()} after`,
    );
    for (const s of sides) await s.api.remove(s.podId).catch((e: unknown) => out(`remove pod ${s.name}: ${String(e)}`));
    podscope.close();
    return sides;
  } finally {
    await daemon?.stop();
    await ctd?.stop();
    await env?.teardown();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      n: { type: 'string', short: 'n' },
      k: { type: 'string', short: 'k' },
      names: { type: 'string' },
      subnets: { type: 'string' },
    },
  });
  const subnets = values.subnets?.split(',').map(Number);
  if (subnets && (subnets.length !== 2 || subnets.some((x) => !Number.isInteger(x))))
    throw new Error(`--subnets takes two numbers (engine, containerd), not ${values.subnets}`);
  await runRuntimeHandlerBench({
    n: Number(values.n ?? 15),
    k: Number(values.k ?? 5),
    ...(values.names && { names: values.names }),
    ...(subnets && { subnets: subnets as [number, number] }),
  });
}
