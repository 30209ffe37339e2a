/**
 * The CRI fuzz property (tests/cri/fuzz.test.ts) against the real engine: real netns, Debian's bridge + host-local
 * (IPv4 + IPv6) + portmap + bandwidth, runc. Fewer runs (each OK one creates a real pod): PODSCOPE_FUZZ_REAL_RUNS,
 * default 30; PODSCOPE_FUZZ_SEED replays. Own bridge, subnets and host ports (a lease of the test kit's allocator),
 * temp dirs; the leak check is scoped to what this test created: its sandboxes' netns, veths on its bridge,
 * host-local reservations in its IPAM dir, iptables/ip6tables rules naming its subnets, network or sandbox ids, CNI
 * cache entries, runc containers and state records.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status as Code, type ServiceError } from '@grpc/grpc-js';
import { createEngine } from '../../electron/engine';
import type { SandboxEngine } from '../../electron/engine/service/engine';
import { restoreHost, snapshotHost, type HostSnapshot } from '../../testkit/host-cleanup';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import type * as pb from '../../electron/cri/generated/runtime_v1';
import { runPodSandboxRequest } from './helpers/pod-config-arbitraries';
import { rawClient, rpc } from './helpers/grpc';
import { findLeftovers, formatLeftovers, subnetTextPrefix } from '../../testkit/leak-check';
import { leaseHost, PORTS_PER_LEASE } from '../../testkit/allocator';

const RUNS = Number(process.env.PODSCOPE_FUZZ_REAL_RUNS ?? 30);
const SEED = process.env.PODSCOPE_FUZZ_SEED ? Number(process.env.PODSCOPE_FUZZ_SEED) : undefined;
const ALLOWED = new Set([Code.OK, Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.ALREADY_EXISTS]);
// bridge, subnets and host ports: a lease of the test kit's allocator (files run in parallel)
const lease = leaseHost('fuzz-real');
afterAll(() => lease.release());
const BRIDGE = lease.name('-fz');
const NETWORK = BRIDGE;
const V4 = subnetTextPrefix(lease.subnet4(0));
const V6 = subnetTextPrefix(lease.subnet6(0));

const sh = (file: string, args: string[]) => {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
};

let dir: string;
let ipamDir: string;
let options: Parameters<typeof createEngine>[0];
let before: HostSnapshot;
let engine: SandboxEngine | undefined;
let server: CriServer | undefined;
let client: pb.RuntimeServiceClient | undefined;
/** every sandbox id this test got back, and where its netns was */
const created = new Map<string, string | undefined>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podscope-r3-fuzzreal-'));
  ipamDir = join(dir, 'ipam');
  const confDir = join(dir, 'net.d');
  await mkdir(confDir);
  await writeFile(
    join(confDir, '10-fuzz.conflist'),
    JSON.stringify({
      cniVersion: '1.0.0',
      name: NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            dataDir: ipamDir,
            ranges: [[{ subnet: `${V4}0/24` }], [{ subnet: `${V6}:/64` }]],
            routes: [{ dst: lease.range4 }],
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'bandwidth', capabilities: { bandwidth: true } },
      ],
    }),
  );
  options = {
    stateDir: join(dir, 'state'),
    runDir: join(dir, 'run'),
    cniConfDir: confDir,
    cniBinDirs: ['/usr/lib/cni'],
    cniCacheDir: join(dir, 'cni-cache'),
    pluginTimeoutMs: 30_000,
  };
  before = snapshotHost();
  engine = await createEngine(options);
  server = await startCriServer({ engine, socketPath: join(dir, 'cri.sock') });
  client = rawClient(server.socketPath);
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await engine?.close();
  // whatever a failed run left: a fresh engine on the same dirs removes it
  const sweeper = await createEngine(options, { noLock: true }).catch(() => undefined);
  if (sweeper) {
    for (const s of await sweeper.list())
      await sweeper.remove(s.id).catch((e: unknown) => console.error(`fuzz-real teardown: remove ${s.id}: ${(e as Error).message}`));
    await sweeper.close();
  }
  restoreHost(before, [BRIDGE]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Moves any usable host port into this test's lease; other values keep their meaning. */
function ownHostPorts(req: pb.RunPodSandboxRequest): pb.RunPodSandboxRequest {
  for (const p of req.config?.portMappings ?? [])
    if (p.hostPort > 0 && p.hostPort <= 65535) p.hostPort = lease.port(p.hostPort % PORTS_PER_LEASE);
  return req;
}

function leftovers(ids: string[]): Record<string, string[]> {
  const nat = [
    ...sh('iptables', ['-t', 'nat', '-S']).split('\n'),
    ...sh('ip6tables', ['-t', 'nat', '-S']).split('\n'),
    ...sh('iptables', ['-S']).split('\n'),
    ...sh('ip6tables', ['-S']).split('\n'),
  ];
  const ipamFiles = (() => {
    try {
      return readdirSync(join(ipamDir, NETWORK)).filter((f) => f !== 'lock' && !f.startsWith('last_reserved_ip'));
    } catch {
      return [];
    }
  })();
  const safeList = (d: string) => {
    try {
      return readdirSync(d);
    } catch {
      return [];
    }
  };
  return {
    netns: [...created.values()].filter((p): p is string => !!p && existsSync(p)),
    veths: sh('ip', ['-o', 'link', 'show', 'master', BRIDGE]).split('\n').filter(Boolean),
    hostLocal: ipamFiles,
    iptables: nat.filter((l) => l.includes(V4) || l.includes(V6) || l.includes(NETWORK) || ids.some((id) => l.includes(id))),
    cniCache: safeList(join(dir, 'cni-cache', 'results')),
    runc: sh('runc', ['--root', join(dir, 'run', 'runc'), 'list', '-q'])
      .split('\n')
      .filter(Boolean),
    records: safeList(join(dir, 'state', 'sandboxes')),
  };
}

describe('RunPodSandbox over arbitrary PodSandboxConfigs, real engine', () => {
  it(
    `answers only OK / INVALID_ARGUMENT / NOT_FOUND / ALREADY_EXISTS, keeps serving, and stop+remove leaves nothing (${RUNS} runs)`,
    async () => {
      const counts = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(runPodSandboxRequest({ realHost: true }).map(ownHostPorts), async (req) => {
          let code: number = Code.OK;
          let details = '';
          try {
            const { podSandboxId: id } = await rpc(client!, (c) => c.runPodSandbox, req, 120_000);
            created.set(id, (await engine!.status(id)).netnsPath);
          } catch (e) {
            code = (e as ServiceError).code;
            details = (e as ServiceError).details;
          }
          const name = Code[code] ?? String(code);
          counts.set(name, (counts.get(name) ?? 0) + 1);
          expect(ALLOWED.has(code), `${name}: ${details.slice(0, 500)}`).toBe(true);
          expect((await rpc(client!, (c) => c.version, { version: '0.1.0' })).runtimeName).toBe('podscope');
        }),
        { numRuns: RUNS, ...(SEED !== undefined && { seed: SEED }), endOnFailure: true },
      );
      console.log(
        `CRI fuzz (real engine): ${RUNS} RunPodSandbox calls; by code: ${[...counts]
          .sort()
          .map(([k, n]) => `${k}=${n}`)
          .join(', ')}`,
      );

      const ids = [...created.keys()];
      const listed = await rpc(client!, (c) => c.listPodSandbox, { filter: undefined });
      expect(listed.items.map((i) => i.id).sort()).toEqual([...ids].sort());
      for (const id of ids) {
        await rpc(client!, (c) => c.stopPodSandbox, { podSandboxId: id }, 60_000);
        await rpc(client!, (c) => c.removePodSandbox, { podSandboxId: id }, 60_000);
      }
      expect((await rpc(client!, (c) => c.listPodSandbox, { filter: undefined })).items).toEqual([]);
      expect(leftovers(ids)).toEqual({ netns: [], veths: [], hostLocal: [], iptables: [], cniCache: [], runc: [], records: [] });
      // and the checker every real test shares, over the same scope
      const shared = findLeftovers({
        bridge: BRIDGE,
        networks: [NETWORK],
        subnets: [lease.subnet4(0), lease.subnet6(0)],
        ids,
        ipamDir,
        cacheDir: options!.cniCacheDir,
        stateDir: options!.stateDir,
        runDir: options!.runDir,
        netnsPaths: [...created.values()].filter((p): p is string => !!p),
        ownsDirs: true,
      });
      expect(formatLeftovers(shared)).toBe(formatLeftovers([]));
    },
    120_000 + RUNS * 4_000,
  ); // scales with PODSCOPE_FUZZ_REAL_RUNS
});
