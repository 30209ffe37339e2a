/**
 * Interop with a real containerd (Debian 1.6.20) started by the test with its own config, dirs, socket, conflist
 * (bridge and subnets from the test kit's allocator, portmap, bandwidth, ipMasq false) and a locally built busybox pause
 * image. Everything goes through Podscope's CRI client; then the same pod config runs in Podscope's engine on the
 * same conflist and the two are compared — view (IP order rules, port decisions, bandwidth) and host truth
 * (portmap DNAT rules and tc rates each runtime's pod got).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../electron/engine/index';
import type { Engine } from '../../electron/engine/service/engine-api';
import { startCriServer, type CriServer } from '../../electron/cri/server';
import { createCriEndpointApi, type CriEndpointApi } from '../../electron/cri/client';
import { createEndpointRegistry } from '../../electron/endpoints';
import { benchCriSideBySide } from '../../bench/cri-bench';
import type { PodSandboxConfigInput } from '../../shared/domain/config';
import type { SandboxStatus } from '../../shared/domain/sandbox';
import { startContainerd, type ContainerdFixture } from '../../testkit/containerd-fixture';
import { subnetTextPrefix } from '../../testkit/leak-check';
import { escapeRe } from '../../testkit/until';

const sh = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8' });
const portA = 31000 + Math.floor(Math.random() * 1000);
const portB = portA + 1000;

const podConfig = (name: string): PodSandboxConfigInput => ({
  metadata: { name, namespace: 'interop', uid: `uid-${name}`, attempt: 0 },
  hostname: name,
  labels: { suite: 'interop', runtime: name },
  port_mappings: [
    { protocol: 0, container_port: 80, host_port: portA },
    { protocol: 0, container_port: 81, host_port: 0 },
    { protocol: 1, container_port: 53, host_port: portB, host_ip: '127.0.0.1' },
  ],
  annotations: { 'kubernetes.io/ingress-bandwidth': '10M', 'kubernetes.io/egress-bandwidth': '1Mi', owner: 'podscope-tests' },
});

/** The DNAT rules portmap programmed for one container: "proto hostPort -> ip:port". */
function dnatRules(containerId: string): string[] {
  const rules = sh('iptables', ['-t', 'nat', '-S']).split('\n');
  const chain = rules.find((l) => l.startsWith('-A CNI-HOSTPORT-DNAT') && l.includes(containerId))?.match(/-j (CNI-DN-\S+)/)?.[1];
  if (!chain) return [];
  return rules
    .filter((l) => l.startsWith(`-A ${chain} `) && l.includes('-j DNAT'))
    .map(
      (l) =>
        `${l.match(/-p (\w+)/)?.[1]} ${l.match(/-d (\S+)/)?.[1] ?? '*'}:${l.match(/--dport (\d+)/)?.[1]} -> ${l.match(/--to-destination (\S+)/)?.[1]}`,
    )
    .sort();
}

/** tbf rates the bandwidth plugin set: on the host veth (ingress to the pod) and on its ifb (egress from the pod). */
function tcRates(s: SandboxStatus): { ingress?: string; egress?: string } {
  const hostVeth = Object.entries(s.interfaces).find(([name, c]) => name.startsWith('veth') && !c.sandbox)?.[0];
  if (!hostVeth) throw new Error(`no host veth in ${JSON.stringify(Object.keys(s.interfaces))}`);
  const rate = (dev: string) => sh('tc', ['qdisc', 'show', 'dev', dev]).match(/tbf .*?rate (\S+)/)?.[1];
  const ifb = sh('tc', ['filter', 'show', 'dev', hostVeth, 'parent', 'ffff:']).match(/Redirect to device (\S+?)\)/)?.[1];
  return { ingress: rate(hostVeth), egress: ifb ? rate(ifb) : undefined };
}

let ctd: ContainerdFixture | undefined;
let engine: Engine | undefined;
let engineDir: string | undefined;
let podscopeServer: CriServer | undefined;
let podscope: CriEndpointApi | undefined;

beforeAll(async () => {
  ctd = await startContainerd({});
  // Podscope's engine on the very same conflist file (same bridge, same host-local store), own state dirs.
  engineDir = mkdtempSync(join(tmpdir(), 'podscope-interop-'));
  engine = await createEngine({
    stateDir: join(engineDir, 'state'),
    runDir: join(engineDir, 'run'),
    cniCacheDir: join(engineDir, 'cni-cache'),
    cniConfDir: ctd.confDir,
    cniBinDirs: ['/usr/lib/cni'],
    pluginTimeoutMs: 30_000,
  });
  podscopeServer = await startCriServer({ engine, socketPath: join(engineDir, 'podscope.sock') });
  podscope = createCriEndpointApi(podscopeServer.socketPath);
});

afterAll(async () => {
  // Podscope's pods first (they share containerd's bridge), then containerd, which cleans the host.
  podscope?.close();
  await podscopeServer?.close().catch(() => undefined);
  if (engine) {
    for (const s of await engine.list().catch(() => []))
      await engine.remove(s.id).catch((e: unknown) => console.error(`interop cleanup: ${(e as Error).message}`));
    await engine.close().catch(() => undefined);
  }
  await ctd?.stop();
  if (engineDir) rmSync(engineDir, { recursive: true, force: true });
});

describe('Podscope client ⇄ containerd 1.6 CRI', () => {
  let id = '';

  it('connects: Version, conditions, and the CNI config decoded from Status verbose', async () => {
    const v = await ctd!.api.connect();
    expect(v).toMatchObject({ runtimeName: 'containerd', runtimeApiVersion: 'v1' });
    expect(await ctd!.api.isPodscope()).toBe(false);
    const cond = Object.fromEntries((await ctd!.api.runtimeConditions()).map((c) => [c.type, c.status]));
    expect(cond).toMatchObject({ RuntimeReady: true, NetworkReady: true });
    const cni = await ctd!.api.cniConfig();
    expect(cni.confDir).toBe(ctd!.confDir);
    expect(cni.networks.map((n) => [n.name, n.ifName])).toEqual([
      ['cni-loopback', 'lo'],
      [ctd!.bridge, 'eth0'],
    ]);
    expect(cni.networks[1]!.plugins.map((p) => p.type)).toEqual(['bridge', 'portmap', 'bandwidth']);
    expect(cni.networks[1]!.plugins[1]!.capabilities).toEqual(['portMappings']);
    await expect(ctd!.api.info()).rejects.toMatchObject({ code: 'Unimplemented' });
  });

  it('the registry marks what containerd cannot give', async () => {
    const reg = createEndpointRegistry({ local: engine! });
    try {
      const view = await reg.add({ address: `unix://${ctd!.socketPath}` });
      // containerd 1.6 has no GetContainerEvents; its trace is not recorded; preview needs Podscope's engine
      // images through its ImageService; exec/attach/port-forward through its streaming server (Podscope's SPDY client);
      // the live view and the measurements are this process's, made on the pods containerd describes
      expect(view.capabilities).toEqual({
        pluginTrace: false,
        preview: false,
        cniConfig: true,
        events: false,
        liveNetwork: true,
        images: true,
        streaming: true,
        measurements: true,
        lab: false,
      });
      expect(view.runtimeVersion).toBe('1.6.20~ds1');
    } finally {
      reg.close();
    }
  });

  it('creates a sandbox with port mappings and bandwidth annotations and lists it', async () => {
    ({ id } = await ctd!.api.run({ config: podConfig('ctd') }));
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    const items = await ctd!.api.list({ labelSelector: { suite: 'interop', runtime: 'ctd' } });
    expect(items.map((s) => [s.id, s.state, s.name])).toEqual([[id, 'SANDBOX_READY', 'ctd_interop_uid-ctd_0']]);
    expect(items[0]!.ip.startsWith(subnetTextPrefix(ctd!.subnet4))).toBe(true);
    // ListPodSandbox has no ports: the list reads them from the pod config in containerd's verbose status
    expect(items[0]!.hostPorts).toEqual([
      { hostPort: portA, containerPort: 80, protocol: 'tcp' },
      { hostPort: portB, containerPort: 53, protocol: 'udp', hostIP: '127.0.0.1' },
    ]);
    expect(Number(BigInt(items[0]!.createdAtNs) / 1_000_000n)).toBeCloseTo(Date.parse(items[0]!.createdAt), -3);
  });

  it('reads its status: IPs, decoded CNI result, recomputed IP selection, ports and bandwidth', async () => {
    const st = await ctd!.api.status(id.slice(0, 13));
    expect(st.id).toBe(id);
    expect(st.state).toBe('SANDBOX_READY');
    expect(st.ip.startsWith(subnetTextPrefix(ctd!.subnet4))).toBe(true);
    expect(st.additionalIps).toEqual([expect.stringMatching(new RegExp(`^${escapeRe(subnetTextPrefix(ctd!.subnet6!))}:`))]);
    expect(st.interfaces.eth0?.ipConfigs.map((c) => c.ip)).toEqual([st.ip, st.additionalIps[0]]);
    expect(st.interfaces.eth0?.sandbox).toMatch(/^\/var\/run\/netns\/cni-/);
    expect(st.netnsPath).toBe(st.interfaces.eth0?.sandbox);
    expect(st.ipSelection).toMatchObject({ preference: 'ipv4', primary: st.ip, additional: st.additionalIps });
    expect(st.ipSelection?.reason).toContain('containerd reported');
    expect(st.pause.pid).toBeGreaterThan(0);
    expect(st.pause.status).toBe('running');
    expect(st.config.port_mappings).toHaveLength(3);
    expect(st.portMappings.map((d) => d.cni ?? null)).toEqual([
      { hostPort: portA, containerPort: 80, protocol: 'tcp' },
      null,
      { hostPort: portB, containerPort: 53, protocol: 'udp', hostIP: '127.0.0.1' },
    ]);
    expect(st.bandwidthAnalysis.capability).toEqual({
      ingressRate: 10_000_000,
      ingressBurst: 4294967295,
      egressRate: 1_048_576,
      egressBurst: 4294967295,
    });
    expect((st.ociSpec as { process?: { args?: string[] } }).process?.args?.[0]).toBe('/bin/sh');
    expect(st.trace).toEqual([]); // not available from containerd; capability pluginTrace is false
    // host truth: portmap got exactly the passed mappings
    expect(dnatRules(id)).toEqual([`tcp *:${portA} -> ${st.ip}:80`, `udp 127.0.0.1/32:${portB} -> ${st.ip}:53`].sort());
  });

  it('matches Podscope’s own result for the same config on the same conflist', async () => {
    const c = await ctd!.api.status(id);
    const { id: pid } = await podscope!.run({ config: podConfig('psc') });
    const p = await podscope!.status(pid);
    // IP order rules: the same family order on eth0 and the same primary/additional choice
    const fam = (ip: string) => (ip.includes(':') ? 6 : 4);
    expect(p.ipSelection!.eth0Ips.map(fam)).toEqual(c.ipSelection!.eth0Ips.map(fam));
    expect([fam(p.ip), ...p.additionalIps.map(fam)]).toEqual([fam(c.ip), ...c.additionalIps.map(fam)]);
    expect(p.ipSelection!.preference).toBe(c.ipSelection!.preference);
    expect(p.ip).not.toBe(c.ip); // one host-local store, two different pods
    // the same port decisions and the same kernel rules (modulo each pod's IP)
    expect(p.portMappings.map((d) => [d.passed, d.cni ?? null])).toEqual(c.portMappings.map((d) => [d.passed, d.cni ?? null]));
    expect(dnatRules(pid).map((r) => r.replace(p.ip, 'POD'))).toEqual(dnatRules(id).map((r) => r.replace(c.ip, 'POD')));
    // the same bandwidth values, as parsed and as tc applied them
    expect(p.bandwidthAnalysis.capability).toEqual(c.bandwidthAnalysis.capability);
    const [pr, cr] = [tcRates(p), tcRates(c)];
    expect(cr).toEqual({ ingress: '10Mbit', egress: expect.stringMatching(/^1048Kbit|1.048Mbit$/) });
    expect(pr).toEqual(cr);
    // what Podscope knows and containerd does not say: the runtimeConfig portmap actually received
    const portmapAdd = p.trace.find((t) => t.plugin?.type === 'portmap' && t.plugin.verb === 'ADD');
    expect(JSON.parse(portmapAdd!.plugin!.stdin).runtimeConfig.portMappings).toEqual(c.portMappings.flatMap((d) => (d.cni ? [d.cni] : [])));
    await podscope!.remove(pid);
  });

  it('stops (NOTREADY, no IP, DNAT gone) and removes (NotFound, not listed); a removed id as 1.6 answers it', async () => {
    await ctd!.api.stop(id);
    const st = await ctd!.api.status(id);
    expect(st.state).toBe('SANDBOX_NOTREADY');
    expect(st.ip).toBe('');
    expect(st.netnsClosed).toBe(true);
    expect(dnatRules(id)).toEqual([]);
    await ctd!.api.remove(id);
    await expect(ctd!.api.status(id)).rejects.toMatchObject({ code: 'NotFound' });
    expect(await ctd!.api.list({ labelSelector: { suite: 'interop' } })).toEqual([]);
    // containerd 1.6.20 predates idempotent StopPodSandbox (docs/semantics.md#stop-sandbox describes 2.x): stop on a removed id is
    // NotFound there, remove is a success. The client reports what the runtime says; Podscope's server says OK to both.
    const outcome = async (p: Promise<void>) =>
      p.then(
        () => 'ok',
        (e: { code: string }) => e.code,
      );
    expect({ stop: await outcome(ctd!.api.stop(id)), remove: await outcome(ctd!.api.remove(id)) }).toEqual({
      stop: 'NotFound',
      remove: 'ok',
    });
  });
});

describe('bench side by side', () => {
  it('times the lifecycle on both runtimes and prints p50/p95 and the ratio', async () => {
    const lines: string[] = [];
    const r = await benchCriSideBySide({
      podscopeSocket: podscopeServer!.socketPath,
      containerdSocket: ctd!.socketPath,
      n: 3,
      print: (l) => lines.push(l),
    });
    console.log(r.table);
    expect(r.rows.map((x) => x.op)).toEqual(['RunPodSandbox', 'PodSandboxStatus', 'ListPodSandbox', 'StopPodSandbox', 'RemovePodSandbox']);
    for (const row of r.rows) {
      expect(row.podscope.n).toBe(3);
      expect(row.containerd.n).toBe(3);
      expect(row.podscope.p50).toBeGreaterThan(0);
      expect(row.ratioP50).toBeGreaterThan(0);
    }
    expect(lines.join('\n')).toContain('ratio p50');
    expect(await ctd!.api.list({ namespace: 'podscope-bench' })).toEqual([]);
    expect(await engine!.list()).toEqual([]);
  });
});
