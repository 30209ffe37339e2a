/**
 * Mass teardown: N pods made on `podscope cri` (the bundle, real engine) and, with --containerd, on a containerd
 * started for the run, then stopped and removed over CRI `concurrency` at a time, as a kubelet draining a node
 * would. Each runtime runs alone (the other holds no pods), so neither pays for the other's processes.
 * --network host: host-network pods (a pause container each, no CNI: the figure the issue compares);
 * --network cni: the throw-away bridge + host-local + portmap + bandwidth conflist on 10.120.0.0/16 (10.122.0.0/16
 * for containerd), so every teardown also runs each plugin's DEL (portmap's iptables processes).
 * `npx tsx bench/teardown.ts [--pods 200] [--network host|cni] [--concurrency 10] [--containerd]
 *   [--cidrs 10.120.0.0/16,10.122.0.0/16] [--names psfl-td]` (--cidrs: podscope's and containerd's ranges;
 * --names: the bridge prefix, "<names>" and "<names>ctd", and the temp/netns tag; use a helper's own host resources).
 * Prints seconds; asserts nothing.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { connectCri, type CriConnection } from '../electron/cri/client/connection';
import * as pb from '../electron/cri/generated/runtime_v1';
import { createRealEnv } from '../testkit/throwaway-env';
import { startContainerd } from '../testkit/containerd-fixture';
import { loadAverage, pool, rssMiB, startCriDaemon } from './daemon';

export interface TeardownOptions {
  pods: number;
  network: 'host' | 'cni';
  concurrency?: number;
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
  createS: number;
  teardownS: number;
  left: number;
}

const HOST_NETWORK = 2; // NamespaceMode.NODE

const podConfig = (i: number, tag: string, network: 'host' | 'cni') =>
  pb.PodSandboxConfig.fromPartial({
    metadata: { name: `td-${i}`, namespace: 'podscope-teardown', uid: `${tag}-${i}`, attempt: 0 },
    labels: { 'bench/pod': `p${i}` },
    ...(network === 'host' && { linux: { securityContext: { namespaceOptions: { network: HOST_NETWORK } } } }),
  });

async function drive(
  conn: CriConnection,
  opts: TeardownOptions,
  tag: string,
  pid: number,
  out: (l: string) => void,
  runtime: TeardownFigure['runtime'],
): Promise<TeardownFigure> {
  const concurrency = opts.concurrency ?? 10;
  const t0 = performance.now();
  const ids = await pool(
    Array.from({ length: opts.pods }, (_, i) => i),
    concurrency,
    async (i) => (await conn.call((x) => x.runPodSandbox, { config: podConfig(i, tag, opts.network), runtimeHandler: '' })).podSandboxId,
  );
  const createS = (performance.now() - t0) / 1000;
  const rss = await rssMiB(pid);
  const loadBefore = await loadAverage();
  const t1 = performance.now();
  await pool(ids, concurrency, async (id) => {
    await conn.call((x) => x.stopPodSandbox, { podSandboxId: id });
    await conn.call((x) => x.removePodSandbox, { podSandboxId: id });
  });
  const teardownS = (performance.now() - t1) / 1000;
  const left = (await conn.call((x) => x.listPodSandbox, { filter: undefined })).items.length;
  out(
    `${runtime.padEnd(10)} ${opts.pods} ${opts.network}-network pods: created in ${createS.toFixed(1)} s, stopped+removed in ${teardownS.toFixed(1)} s (${((teardownS * 1000) / opts.pods).toFixed(1)} ms/pod wall, ${concurrency} at a time; RSS ${rss?.toFixed(0) ?? '?'} MiB at N; load ${loadBefore} → ${await loadAverage()}); ${left} left`,
  );
  return { runtime, pods: opts.pods, createS, teardownS, left };
}

export async function runTeardownBench(opts: TeardownOptions): Promise<TeardownFigure[]> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const tag = Date.now().toString(36);
  const figures: TeardownFigure[] = [];
  out(`# mass teardown: ${opts.pods} pods, stop then remove each over CRI, ${opts.concurrency ?? 10} pods at a time`);
  const [cidr, ctdCidr] = opts.cidrs ?? ['10.120.0.0/16', '10.122.0.0/16'];
  const names = opts.names ?? 'psfl-td';
  const env = await createRealEnv({
    tag: names.replace(/^ps/, 'p'),
    subnet: 123,
    bridge: names,
    ...(opts.network === 'cni' && { ipv4Cidr: cidr }),
  });
  try {
    const daemon = await startCriDaemon(env, { nodeArgs: opts.nodeArgs ?? [] });
    let conn: CriConnection | undefined;
    try {
      conn = await connectCri(daemon.socketPath);
      figures.push(await drive(conn, opts, tag, daemon.pid, out, 'podscope'));
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
      figures.push(await drive(conn, opts, tag, ctd.pid, out, 'containerd'));
    } finally {
      conn?.close();
      await ctd.stop();
    }
    const [p, c] = figures;
    out(`teardown podscope / containerd: ${(p!.teardownS / c!.teardownS).toFixed(2)}x`);
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
    },
  });
  const cidrs = values.cidrs?.split(',');
  if (cidrs && cidrs.length !== 2) throw new Error(`--cidrs takes podscope's and containerd's range, not ${values.cidrs}`);
  const network = values.network ?? 'host';
  if (network !== 'host' && network !== 'cni') throw new Error(`--network must be host or cni, not ${network}`);
  runTeardownBench({
    pods: Number(values.pods ?? 200),
    network,
    concurrency: Number(values.concurrency ?? 10),
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
