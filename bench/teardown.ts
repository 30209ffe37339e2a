/**
 * Mass teardown: N pods made on `podscope cri` (the bundle, real engine) and, with --containerd, on a containerd
 * started for the run, then stopped and removed over CRI `concurrency` at a time, as a kubelet draining a node
 * would. Each runtime runs alone (the other holds no pods), so neither pays for the other's processes.
 * --network host: host-network pods (a pause container each, no CNI: the figure the issue compares);
 * --network cni: the throw-away bridge + host-local + portmap + bandwidth conflist on 10.120.0.0/16 (10.122.0.0/16
 * for containerd), each pod with one hostPort (from --host-port-base), so every teardown runs portmap's DEL with its
 * iptables processes. Per point it prints the wall time, each runtime's CPU (its own and its children's, i.e. the
 * plugins and iptables), the processes started host-wide per pod, and for Podscope the portmap DEL p50/p99 and the
 * time DELs waited for a netfilter slot, read from the stop trace (one verbose PodSandboxStatus per pod).
 * `npx tsx bench/teardown.ts [--pods 200] [--network host|cni] [--concurrency 10 | 1,4,10,20] [--containerd]
 *   [--cidrs 10.120.0.0/16,10.122.0.0/16] [--names psfl-td] [--host-port-base 42000] [--max-netfilter-plugins N]`
 * (--cidrs: podscope's and containerd's ranges; --names: the bridge prefix, "<names>" and "<names>ctd", and the
 * temp/netns tag; use a helper's own host resources; --max-netfilter-plugins: the engine's bound, for an A/B).
 * Prints seconds; asserts nothing.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { connectCri, type CriConnection } from '../electron/cri/client/connection';
import * as pb from '../electron/cri/generated/runtime_v1';
import { createRealEnv } from '../testkit/throwaway-env';
import { startContainerd } from '../testkit/containerd-fixture';
import { readdir, readFile } from 'node:fs/promises';
import type { SandboxVerboseInfo } from '../shared/domain/verbose-info';
import { loadAverage, pool, rssMiB, startCriDaemon } from './daemon';
import { percentile } from './stats';

export interface TeardownOptions {
  pods: number;
  network: 'host' | 'cni';
  /** pods stopped+removed at once; a list runs one point per figure on the same runtime */
  concurrency?: number | number[];
  /** first hostPort of the cni pods (pod i maps hostPort base+i to 80); default 42000 */
  hostPortBase?: number;
  /** the engine's bound on portmap/firewall execs at once (--max-netfilter-plugins); default the engine's own */
  maxNetfilterPlugins?: number;
  containerd?: boolean;
  /** podscope's and containerd's IPv4 ranges for --network cni (default 10.120.0.0/16, 10.122.0.0/16) */
  cidrs?: [string, string];
  /** bridge name prefix and env tag (default psfl-td) */
  names?: string;
  /** node flags for the podscope daemon (e.g. --cpu-prof) */
  nodeArgs?: string[];
  out?: (line: string) => void;
}

export interface TeardownFigure {
  runtime: 'podscope' | 'containerd';
  pods: number;
  concurrency: number;
  createS: number;
  teardownS: number;
  left: number;
  /** CPU seconds during the teardown: the runtime process itself, and its reaped children (plugins, iptables, runc) */
  cpuSelfS: number;
  cpuChildrenS: number;
  /** processes started on the whole host during the teardown, per pod (other users of the host included) */
  forksPerPod: number;
  /** host CPU busy during the teardown, 0..1 of all cores */
  hostBusy: number;
  /** Podscope only: portmap DEL exec times and the waits for a netfilter slot (ms), from the stop traces */
  portmapDelMs?: number[];
  netfilterWaitMs?: number[];
}

const HOST_NETWORK = 2; // NamespaceMode.NODE

const TCP = 0; // Protocol.TCP

const podConfig = (i: number, tag: string, network: 'host' | 'cni', hostPortBase: number) =>
  pb.PodSandboxConfig.fromPartial({
    metadata: { name: `td-${i}`, namespace: 'podscope-teardown', uid: `${tag}-${i}`, attempt: 0 },
    labels: { 'bench/pod': `p${i}` },
    ...(network === 'host' && { linux: { securityContext: { namespaceOptions: { network: HOST_NETWORK } } } }),
    ...(network === 'cni' && { portMappings: [{ protocol: TCP, containerPort: 80, hostPort: hostPortBase + i, hostIp: '' }] }),
  });

const TICKS_PER_S = 100; // USER_HZ on Linux

/** utime+stime and cutime+cstime of a process, in seconds (/proc/<pid>/stat fields 14-17); 0s once it is gone */
async function cpuOf(pid: number): Promise<{ self: number; children: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (!stat) return { self: 0, children: 0 };
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  // f[0] is field 3 (state): utime is field 14
  return { self: (f[11]! + f[12]!) / TICKS_PER_S, children: (f[13]! + f[14]!) / TICKS_PER_S };
}

/**
 * A runtime's own CPU and its children's: the ones it reaped, plus the live ones with theirs (Podscope execs the
 * plugins through a spawn helper of its own, which reaps them; containerd execs them itself).
 */
async function processCpu(pid: number): Promise<{ self: number; children: number }> {
  const own = await cpuOf(pid);
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const kids = (await Promise.all(tasks.map((t) => readFile(`/proc/${pid}/task/${t}/children`, 'utf8').catch(() => '')))).flatMap((l) =>
    l.split(' ').filter(Boolean).map(Number),
  );
  let children = own.children;
  for (const k of kids) {
    const c = await cpuOf(k);
    children += c.self + c.children;
  }
  return { self: own.self, children };
}

/** busy and total jiffies of all cores, and the processes started since boot (/proc/stat) */
async function hostCpu(): Promise<{ busy: number; total: number; forks: number }> {
  const stat = await readFile('/proc/stat', 'utf8');
  const cpu = stat.split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  const idle = cpu[3]! + cpu[4]!;
  return { busy: total - idle, total, forks: Number(/^processes (\d+)$/m.exec(stat)?.[1] ?? 0) };
}

/** portmap DEL execs of the stop phase, with their waits for a netfilter slot, from a Podscope verbose status */
function portmapDels(info: Record<string, string>): { ms: number; waitMs: number }[] {
  const doc = JSON.parse(info.info ?? '{}') as SandboxVerboseInfo;
  return (doc.podscope?.trace ?? [])
    .filter((e) => e.phase === 'stop' && e.plugin?.type === 'portmap' && e.plugin.verb === 'DEL')
    .map((e) => ({ ms: e.durationMs, waitMs: Number(e.detail?.netfilterWaitMs ?? 0) }));
}

async function drive(
  conn: CriConnection,
  opts: TeardownOptions,
  tag: string,
  pid: number,
  out: (l: string) => void,
  runtime: TeardownFigure['runtime'],
  concurrency: number,
): Promise<TeardownFigure> {
  const hostPortBase = opts.hostPortBase ?? 42000;
  const t0 = performance.now();
  const ids = await pool(
    Array.from({ length: opts.pods }, (_, i) => i),
    concurrency,
    async (i) =>
      (
        await conn.call((x) => x.runPodSandbox, {
          config: podConfig(i, `${tag}-c${concurrency}`, opts.network, hostPortBase),
          runtimeHandler: '',
        })
      ).podSandboxId,
  );
  const createS = (performance.now() - t0) / 1000;
  const rss = await rssMiB(pid);
  const loadBefore = await loadAverage();
  // the DEL times are read from Podscope's stop trace between stop and remove (containerd keeps none)
  const readDels = runtime === 'podscope' && opts.network === 'cni';
  const dels: { ms: number; waitMs: number }[] = [];
  const [cpu0, host0] = [await processCpu(pid), await hostCpu()];
  const t1 = performance.now();
  await pool(ids, concurrency, async (id) => {
    await conn.call((x) => x.stopPodSandbox, { podSandboxId: id });
    if (readDels) dels.push(...portmapDels((await conn.call((x) => x.podSandboxStatus, { podSandboxId: id, verbose: true })).info));
    await conn.call((x) => x.removePodSandbox, { podSandboxId: id });
  });
  const teardownS = (performance.now() - t1) / 1000;
  const [cpu1, host1] = [await processCpu(pid), await hostCpu()];
  const left = (await conn.call((x) => x.listPodSandbox, { filter: undefined })).items.length;
  const f: TeardownFigure = {
    runtime,
    pods: opts.pods,
    concurrency,
    createS,
    teardownS,
    left,
    cpuSelfS: cpu1.self - cpu0.self,
    cpuChildrenS: cpu1.children - cpu0.children,
    forksPerPod: (host1.forks - host0.forks) / opts.pods,
    hostBusy: (host1.busy - host0.busy) / (host1.total - host0.total),
    ...(readDels && { portmapDelMs: dels.map((d) => d.ms), netfilterWaitMs: dels.map((d) => d.waitMs) }),
  };
  const perPod = (s: number) => ((s * 1000) / opts.pods).toFixed(1);
  const delText = f.portmapDelMs
    ? `; portmap DEL p50 ${percentile(f.portmapDelMs, 50).toFixed(0)} ms p99 ${percentile(f.portmapDelMs, 99).toFixed(0)} ms, waited for a netfilter slot p50 ${percentile(f.netfilterWaitMs!, 50).toFixed(0)} ms p99 ${percentile(f.netfilterWaitMs!, 99).toFixed(0)} ms`
    : '';
  out(
    `${runtime.padEnd(10)} ${opts.pods} ${opts.network}-network pods, ${concurrency} at a time: created in ${createS.toFixed(1)} s, stopped+removed in ${teardownS.toFixed(1)} s (${perPod(teardownS)} ms/pod wall; CPU per pod ${perPod(f.cpuSelfS)} ms own + ${perPod(f.cpuChildrenS)} ms children; ${f.forksPerPod.toFixed(1)} processes/pod host-wide; host CPU ${(f.hostBusy * 100).toFixed(0)}% busy; RSS ${rss?.toFixed(0) ?? '?'} MiB at N; load ${loadBefore} → ${await loadAverage()})${delText}; ${left} left`,
  );
  return f;
}

export async function runTeardownBench(opts: TeardownOptions): Promise<TeardownFigure[]> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const tag = Date.now().toString(36);
  const figures: TeardownFigure[] = [];
  const points = [opts.concurrency ?? 10].flat();
  out(
    `# mass teardown: ${opts.pods} pods, stop then remove each over CRI, ${points.join(', ')} pods at a time${opts.maxNetfilterPlugins === undefined ? '' : `; engine --max-netfilter-plugins ${opts.maxNetfilterPlugins}`}`,
  );
  const [cidr, ctdCidr] = opts.cidrs ?? ['10.120.0.0/16', '10.122.0.0/16'];
  const names = opts.names ?? 'psfl-td';
  const env = await createRealEnv({
    tag: names.replace(/^ps/, 'p'),
    subnet: 123,
    bridge: names,
    ...(opts.network === 'cni' && { ipv4Cidr: cidr }),
  });
  try {
    const daemon = await startCriDaemon(env, {
      nodeArgs: opts.nodeArgs ?? [],
      engineArgs: opts.maxNetfilterPlugins === undefined ? [] : ['--max-netfilter-plugins', String(opts.maxNetfilterPlugins)],
    });
    let conn: CriConnection | undefined;
    try {
      conn = await connectCri(daemon.socketPath);
      for (const c of points) figures.push(await drive(conn, opts, tag, daemon.pid, out, 'podscope', c));
    } finally {
      conn?.close();
      await daemon.stop();
    }
  } finally {
    await env.teardown();
  }
  if (opts.containerd) {
    const ctd = await startContainerd({
      bridge: `${names}ctd`,
      subnet: 124,
      ...(opts.network === 'cni' && { ipv4Cidr: ctdCidr }),
    });
    let conn: CriConnection | undefined;
    try {
      conn = await connectCri(ctd.socketPath);
      for (const c of points) figures.push(await drive(conn, opts, tag, ctd.pid, out, 'containerd', c));
    } finally {
      conn?.close();
      await ctd.stop();
    }
    for (const c of points) {
      const p = figures.find((f) => f.runtime === 'podscope' && f.concurrency === c)!;
      const d = figures.find((f) => f.runtime === 'containerd' && f.concurrency === c)!;
      out(`teardown podscope / containerd, ${c} at a time: ${(p.teardownS / d.teardownS).toFixed(2)}x`);
    }
  }
  return figures;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      pods: { type: 'string' },
      network: { type: 'string' },
      concurrency: { type: 'string' },
      containerd: { type: 'boolean' },
      'cpu-prof': { type: 'string' },
      cidrs: { type: 'string' },
      names: { type: 'string' },
      'host-port-base': { type: 'string' },
      'max-netfilter-plugins': { type: 'string' },
    },
  });
  const cidrs = values.cidrs?.split(',');
  if (cidrs && cidrs.length !== 2) throw new Error(`--cidrs takes podscope's and containerd's range, not ${values.cidrs}`);
  const concurrency = (values.concurrency ?? '10').split(',').map(Number);
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1))
    throw new Error(`--concurrency takes positive integers (a comma list runs one point each), not ${values.concurrency}`);
  const network = values.network ?? 'host';
  if (network !== 'host' && network !== 'cni') throw new Error(`--network must be host or cni, not ${network}`);
  runTeardownBench({
    pods: Number(values.pods ?? 200),
    network,
    concurrency,
    ...(values['host-port-base'] && { hostPortBase: Number(values['host-port-base']) }),
    ...(values['max-netfilter-plugins'] !== undefined && { maxNetfilterPlugins: Number(values['max-netfilter-plugins']) }),
    containerd: values.containerd ?? false,
    ...(cidrs && { cidrs: cidrs as [string, string] }),
    ...(values.names && { names: values.names }),
    ...(values['cpu-prof'] && { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] }),
  }).then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`teardown: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
