/**
 * Reads at the transport's floor: PodSandboxStatus, ContainerStatus, ListPodSandbox and ListContainers against the
 * Version RPC on the same socket and connection, at each --pods size. Version asks nothing of the engine, so its
 * time is grpc-js's own (framing, HTTP/2, the event loop hop); a read's ratio to it is what Podscope adds.
 *
 * Two servers, each in a process of its own (the client timing it never shares its event loop):
 *  - `real`: `podscope cri` (the bundle) on the real engine, host-network pods (a pause container each, no CNI);
 *    container reads are not timed there (1,000 real containers would need a rootfs and a monitor each);
 *  - `fakes`: the same server and engine over the touch-point fakes (fake-cri-server.ts), one running container
 *    per pod, so the container reads are timed at 1,000 too.
 * Ops are interleaved per sample (rotating order, one server's ops after another's, each server's run opened by an
 * untimed call), so a load spike on the shared host lands on every op alike.
 * `npx tsx bench/cri-floor.ts [--pods 20,1000] [--samples 400] [--server real,fakes] [--cpu-prof DIR] [--only REGEX]`.
 * --cpu-prof: the real server is profiled for its whole run; the fakes server only while the calls are timed.
 * Prints figures; asserts nothing.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { connectCri, type CriConnection } from '../electron/cri/client/connection';
import * as pb from '../electron/cri/generated/runtime_v1';
import { createRealEnv } from '../testkit/throwaway-env';
import { loadAverage, pool, startCriDaemon } from './daemon';
import { percentile, row } from './stats';

export type FloorServer = 'real' | 'fakes';

export interface FloorOptions {
  sizes: number[];
  samples?: number;
  servers?: FloorServer[];
  /** write each server's V8 CPU profile into this directory (node --cpu-prof) */
  cpuProfDir?: string;
  /** time only the ops whose name matches (Version always), e.g. /^ListContainers/ to profile one op */
  only?: RegExp;
  out?: (line: string) => void;
}

export interface FloorRow {
  server: FloorServer;
  pods: number;
  op: string;
  p50: number;
  ratio: number;
  /** a list's p50 against the floor's (raw-grpc-server.ts, same reply bytes) */
  floorRatio?: number;
}

const HOST_NETWORK = 2; // NamespaceMode.NODE
const FAKE_IMAGE = 'podscope.test/busybox:1';
const FAKE_SERVER = fileURLToPath(new URL('./fake-cri-server.ts', import.meta.url));
const RAW_SERVER = fileURLToPath(new URL('./raw-grpc-server.ts', import.meta.url));

const podConfig = (i: number, tag: string) =>
  pb.PodSandboxConfig.fromPartial({
    metadata: { name: `floor-${i}`, namespace: 'podscope-floor', uid: `${tag}-${i}`, attempt: 0 },
    labels: { 'bench/pod': `p${i}`, 'bench/group': `g${i % 10}` },
    linux: { securityContext: { namespaceOptions: { network: HOST_NETWORK } } },
  });

interface Served {
  socketPath: string;
  /** toggles the server's CPU profile (fakes server with a profile dir only) */
  profile?(): void;
  stop(): Promise<void>;
}

/** with cpuProfDir the fakes server profiles only while the calls are timed (profile(), SIGUSR2) */
async function startFakeServer(cpuProfDir?: string): Promise<Served> {
  const served = await startTsServer(FAKE_SERVER, cpuProfDir ? ['--profile-dir', cpuProfDir] : []);
  // without a profile dir the server has no SIGUSR2 handler, and the signal would end it
  return cpuProfDir ? served : { socketPath: served.socketPath, stop: served.stop };
}

/** raw-grpc-server.ts answering the two lists with `replies` (the bytes our server sent), through the shim or not */
async function startRawServer(replies: Record<'ListPodSandbox' | 'ListContainers', Buffer>, shim: boolean): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), 'podscope-pfl-floor-raw-'));
  for (const [name, bytes] of Object.entries(replies)) await writeFile(join(dir, `${name}.bin`), bytes);
  const served = await startTsServer(RAW_SERVER, [dir, ...(shim ? ['--shim'] : [])]);
  return {
    socketPath: served.socketPath,
    async stop() {
      await served.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function startTsServer(script: string, args: string[]): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), 'podscope-pfl-floor-sock-'));
  const socketPath = join(dir, 'cri.sock');
  const child = spawn(process.execPath, ['--import', 'tsx', script, socketPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before serving`)));
  });
  return {
    socketPath,
    profile: () => child.kill('SIGUSR2'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

type Call = () => Promise<unknown>;
type ListMethod = 'ListPodSandbox' | 'ListContainers';

/** An unfiltered list whose reply is kept as the bytes that came over the wire: the call without the client's decode. */
function listBytes(conn: CriConnection, method: ListMethod): Promise<Buffer> {
  const request =
    method === 'ListPodSandbox'
      ? pb.ListPodSandboxRequest.encode({ filter: undefined })
      : pb.ListContainersRequest.encode({ filter: undefined });
  const bytes = Buffer.from(request.finish());
  return new Promise((resolve, reject) => {
    conn.client.makeUnaryRequest(
      `/runtime.v1.RuntimeService/${method}`,
      () => bytes,
      (b: Buffer) => b,
      {},
      (e, b) => (e ? reject(e) : resolve(b!)),
    );
  });
}

/** which server an op calls: ours, or one of the floor servers (by the name's prefix) */
const serverOf = (op: string) => /^floor(\+shim)? /.exec(op)?.[0] ?? '';

async function timeOps(ops: Array<[string, Call]>, samples: number): Promise<Map<string, number[]>> {
  const times = new Map<string, number[]>(ops.map(([name]) => [name, []]));
  for (let w = 0; w < Math.min(100, samples); w++) for (const [, call] of ops) await call(); // warm-up: JIT, caches
  const groups = [...new Set(ops.map(([name]) => serverOf(name)))].map((g) => ops.filter(([name]) => serverOf(name) === g));
  for (let j = 0; j < samples; j++) {
    for (let g = 0; g < groups.length; g++) {
      const group = groups[(g + j) % groups.length]!;
      // The first call on a connection after calls to another server pays for waking that server: an untimed
      // call takes it, so no op of the group is always the one that pays.
      await group[0]![1]();
      for (let o = 0; o < group.length; o++) {
        const [name, call] = group[(o + j) % group.length]!;
        const t0 = performance.now();
        await call();
        times.get(name)!.push(performance.now() - t0);
      }
    }
  }
  return times;
}

export async function runCriFloor(opts: FloorOptions): Promise<FloorRow[]> {
  const out = opts.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const sizes = [...new Set(opts.sizes)].sort((a, b) => a - b);
  const samples = opts.samples ?? 400;
  const rows: FloorRow[] = [];
  for (const server of opts.servers ?? ['real', 'fakes']) {
    const tag = Date.now().toString(36);
    const env = server === 'real' ? await createRealEnv({ tag: 'pfl-floor', subnet: 121, bridge: 'psfl-floor' }) : undefined;
    let served: Served | undefined;
    let conn: CriConnection | undefined;
    const pods: string[] = [];
    const containers: string[] = [];
    const floors: Served[] = [];
    const floorConns: CriConnection[] = [];
    try {
      const cpuProf = opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : [];
      served = env ? await startCriDaemon(env, { nodeArgs: cpuProf }) : await startFakeServer(opts.cpuProfDir);
      conn = await connectCri(served.socketPath);
      const c = conn;
      out(
        `# reads against Version on one connection, ${server} server (${server === 'real' ? 'host-network pods, no containers' : 'touch-point fakes, one running container per pod'}), p50 of ${samples} calls per op`,
      );
      const w = [30, 8, 8, 8];
      for (const size of sizes) {
        const fresh = await pool(
          Array.from({ length: size - pods.length }, (_, k) => pods.length + k),
          10,
          async (i) => {
            const config = podConfig(i, tag);
            const id = (await c.call((x) => x.runPodSandbox, { config, runtimeHandler: '' })).podSandboxId;
            if (server === 'fakes') {
              const cid = (
                await c.call((x) => x.createContainer, {
                  podSandboxId: id,
                  config: pb.ContainerConfig.fromPartial({
                    metadata: { name: 'main' },
                    image: { image: FAKE_IMAGE },
                    command: ['sleep', 'inf'],
                    labels: { 'bench/pod': `p${i}` },
                  }),
                  sandboxConfig: config,
                })
              ).containerId;
              await c.call((x) => x.startContainer, { containerId: cid });
              containers.push(cid);
            }
            return id;
          },
        );
        pods.push(...fresh);
        const k = Math.floor(size / 2);
        let replies: Record<ListMethod, Buffer> | undefined;
        const pod = pods[k]!;
        const ops: Array<[string, Call]> = [
          ['Version', () => c.call((x) => x.version, { version: '' })],
          ['PodSandboxStatus', () => c.call((x) => x.podSandboxStatus, { podSandboxId: pod, verbose: false })],
          ['ListPodSandbox id=', () => c.call((x) => x.listPodSandbox, { filter: { id: pod, state: undefined, labelSelector: {} } })],
          [
            'ListPodSandbox label=',
            () => c.call((x) => x.listPodSandbox, { filter: { id: '', state: undefined, labelSelector: { 'bench/pod': `p${k}` } } }),
          ],
          ['ListPodSandbox', () => c.call((x) => x.listPodSandbox, { filter: undefined })],
        ];
        if (server === 'fakes') {
          const ctr = containers[k]!;
          ops.push(
            ['ContainerStatus', () => c.call((x) => x.containerStatus, { containerId: ctr, verbose: false })],
            [
              'ListContainers pod=',
              () =>
                c.call((x) => x.listContainers, {
                  filter: pb.ContainerFilter.fromPartial({ podSandboxId: pod }),
                }),
            ],
            ['ListContainers', () => c.call((x) => x.listContainers, { filter: undefined })],
            ['ListPodSandbox bytes', () => listBytes(c, 'ListPodSandbox')],
            ['ListContainers bytes', () => listBytes(c, 'ListContainers')],
          );
          // The floor: a bare grpc-js server replying with the very bytes ours sent, on a connection of its own.
          replies = { ListPodSandbox: await listBytes(c, 'ListPodSandbox'), ListContainers: await listBytes(c, 'ListContainers') };
          for (const shim of [false, true]) {
            const raw = await startRawServer(replies, shim);
            floors.push(raw);
            const rc = await connectCri(raw.socketPath);
            floorConns.push(rc);
            const p = shim ? 'floor+shim ' : 'floor ';
            ops.push(
              [`${p}Version`, () => rc.call((x) => x.version, { version: '' })],
              [`${p}ListPodSandbox`, () => rc.call((x) => x.listPodSandbox, { filter: undefined })],
              [`${p}ListContainers`, () => rc.call((x) => x.listContainers, { filter: undefined })],
              [`${p}ListPodSandbox bytes`, () => listBytes(rc, 'ListPodSandbox')],
              [`${p}ListContainers bytes`, () => listBytes(rc, 'ListContainers')],
            );
          }
        }
        const only = opts.only;
        if (only) ops.splice(0, ops.length, ...ops.filter(([name]) => name.endsWith('Version') || only.test(name)));
        if (server === 'fakes') served.profile?.();
        const times = await timeOps(ops, samples);
        if (server === 'fakes') served.profile?.();
        const p50Of = (op: string) => percentile(times.get(op)!, 50);
        out('');
        out(`${size} pods (load ${await loadAverage()})`);
        out(row(['op (ms)', 'p50', 'p95', '/Version', '/floor'], [...w, 8]));
        for (const [op] of ops) {
          const t = times.get(op)!;
          const p50 = percentile(t, 50);
          // a floor op against its own server's Version; ours against ours, and against the floor's same op
          const floorPrefix = /^floor(\+shim)? /.exec(op)?.[0];
          const version = p50Of(floorPrefix ? `${floorPrefix}Version` : 'Version');
          const floor = !floorPrefix && times.has(`floor ${op}`) ? p50Of(`floor ${op}`) : undefined;
          rows.push({ server, pods: size, op, p50, ratio: p50 / version, ...(floor !== undefined && { floorRatio: p50 / floor }) });
          out(
            row(
              [
                op,
                fmt2(p50),
                fmt2(percentile(t, 95)),
                `${(p50 / version).toFixed(2)}x`,
                floor === undefined ? '' : `${(p50 / floor).toFixed(2)}x`,
              ],
              [...w, 8],
            ),
          );
        }
        if (replies && times.has('floor ListPodSandbox') && times.has('floor ListContainers')) {
          // What the transport and the client's decode alone cost: no server can answer under these.
          const summary = (m: ListMethod) =>
            `${m} ${(p50Of(`floor ${m}`) / p50Of('floor Version')).toFixed(2)}x (${(p50Of(`floor ${m} bytes`) / p50Of('floor Version')).toFixed(2)}x undecoded)`;
          out(`floor (bare grpc-js, same reply bytes) against its Version: ${summary('ListPodSandbox')}, ${summary('ListContainers')}`);
          const decode = (m: ListMethod) => {
            const t: number[] = [];
            for (let i = 0; i < 100; i++) {
              const t0 = performance.now();
              if (m === 'ListPodSandbox') pb.ListPodSandboxResponse.decode(replies![m]);
              else pb.ListContainersResponse.decode(replies![m]);
              t.push(performance.now() - t0);
            }
            return `${m} ${fmt2(percentile(t, 50))} ms (${replies![m].length} B)`;
          };
          out(`the client's decode alone (ts-proto, this process, p50 of 100): ${decode('ListPodSandbox')}, ${decode('ListContainers')}`);
        }
        for (const conn of floorConns.splice(0)) conn.close();
        for (const raw of floors.splice(0)) await raw.stop();
      }
    } finally {
      if (conn) {
        const c = conn;
        await pool(pods, 10, async (id) => {
          await c.call((x) => x.stopPodSandbox, { podSandboxId: id }).catch(() => undefined);
          await c.call((x) => x.removePodSandbox, { podSandboxId: id }).catch((e: unknown) => out(`remove ${id}: ${(e as Error).message}`));
        });
        c.close();
      }
      for (const conn of floorConns) conn.close();
      for (const raw of floors) await raw.stop();
      await served?.stop();
      await env?.teardown();
    }
    out('');
  }
  return rows;
}

const fmt2 = (ms: number) => (Number.isNaN(ms) ? '-' : ms.toFixed(2));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      pods: { type: 'string' },
      samples: { type: 'string' },
      server: { type: 'string' },
      'cpu-prof': { type: 'string' },
      only: { type: 'string' },
    },
  });
  runCriFloor({
    sizes: (values.pods ?? '20,1000').split(',').map(Number),
    samples: Number(values.samples ?? 400),
    servers: (values.server ?? 'real,fakes').split(',') as FloorServer[],
    ...(values['cpu-prof'] && { cpuProfDir: values['cpu-prof'] }),
    ...(values.only && { only: new RegExp(values.only) }),
  }).then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`cri-floor: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
