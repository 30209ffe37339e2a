/**
 * Every measuring verb on a pod containerd made, through `podscope --endpoint` as a user runs it: containerd 1.6.20
 * from the test kit (its own root, state, socket and conf dir; bridge + portmap + bandwidth), a pod with a host port,
 * bandwidth annotations and a busybox httpd container, a second ready pod on the same network as the peer. Podscope
 * resolves both from containerd's verbose status and libcni's cache and measures them here. The peer has no
 * dns_config: its nameservers come from its resolv.conf (containerd's copy of this host's), read through its pause
 * process's root.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cniCacheOf, netfilterOf, processesIn, tracefsInstances } from '../../testkit/netns-snapshot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseHost, type HostLease } from '../../testkit/allocator';
import { startContainerd, testConflist, type ContainerdFixture } from '../../testkit/containerd-fixture';
import { importBusybox, runHttpdPod, type ContainerdHttpdPod } from '../../testkit/containerd-pod';
import { podscope } from './helpers/podscope-cli';

let ctd: ContainerdFixture;
let lease: HostLease;
let pod: ContainerdHttpdPod;
let peer: ContainerdHttpdPod;
let endpoint: string;

beforeAll(async () => {
  lease = leaseHost('foreign');
  ctd = await startContainerd({});
  importBusybox(ctd);
  // a resolv.conf naming no nameserver (an empty dns_config would get this host's copied): this host's nameserver
  // need not answer from a pod, and these paths are not about DNS
  pod = await runHttpdPod(ctd, { name: 'web', hostPort: lease.port(0), dns: { servers: [], searches: [], options: ['ndots:1'] } });
  peer = await runHttpdPod(ctd, { name: 'peer', hostPort: lease.port(1), dns: 'host' });
  // containerd copied this host's resolv.conf into the peer (it has no dns_config); this host's nameserver is not an
  // address a test may send to, so the copy (containerd's file, bind-mounted into the pod) names the bridge's gateway
  // instead — this host's own address, where nothing answers DNS. What is measured: the servers come from the pod's
  // own file, read through its pause's root.
  writeFileSync(
    join(ctd.dir, 'root', 'io.containerd.grpc.v1.cri', 'sandboxes', peer.podId, 'resolv.conf'),
    `nameserver ${ctd.subnet4.replace(/\.0\/\d+$/, '.1')}\n`,
  );
  endpoint = `unix://${ctd.socketPath}`;
}, 180_000);

afterAll(async () => {
  await ctd?.stop();
  lease?.release();
});

interface JsonPath {
  kind: string;
  family?: number;
  listener?: string;
  declaredBy?: string;
  answeredBy?: string;
  verdict: string;
  to: string;
  from: string;
  trace?: { steps: Array<{ kind: string; owner?: { plugin: string; network?: string; sandboxId?: string } | null }> };
}

describe("the measuring verbs on containerd's pod, over --endpoint", () => {
  it('probe measures host port, pod port, gateway and the peer on the same network, all reachable', async () => {
    const r = await podscope('probe', '--endpoint', endpoint, '-o', 'json', pod.podId);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as {
      sandboxId: string;
      paths: JsonPath[];
      networks: Array<{ network: string; plugins: string[] }>;
    };
    expect(report.sandboxId).toBe(pod.podId);
    expect(report.networks.map((n) => n.network)).toEqual([ctd.bridge]);
    const kinds = new Set(report.paths.filter((p) => p.verdict === 'reachable').map((p) => p.kind));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['hostPort', 'gateway', 'peer']));
    expect(report.paths.some((p) => p.to.includes(String(pod.hostPort)))).toBe(true);
    // the peer is containerd's other ready pod on the network, measured both ways
    const peers = report.paths.filter((p) => p.kind === 'peer' && p.verdict === 'reachable');
    expect(peers.map((p) => p.answeredBy)).toEqual(expect.arrayContaining([peer.podId, pod.podId]));
    // and to the port each declares (its port mapping's container port 80, where its httpd listens), each way: the
    // httpd is connected to as it is, never replaced by a responder
    const ports = report.paths.filter((p) => p.kind === 'peerPort' && p.family === 4);
    expect(ports.map((p) => [p.from === 'pod', p.to.endsWith(':80'), p.verdict, p.listener, p.declaredBy]).sort()).toEqual([
      [false, true, 'reachable', 'existing', 'port mapping 0'],
      [true, true, 'reachable', 'existing', 'port mapping 0'],
    ]);
  });

  it("a pod without dns_config: DNS paths to the nameservers of its resolv.conf, read through the pause's root", async () => {
    const r = await podscope('probe', '--endpoint', endpoint, '-o', 'json', peer.podId);
    const report = JSON.parse(r.stdout) as { paths: JsonPath[]; dns?: { source: string; servers: string[]; resolvConf?: string } };
    // the sandbox's resolv.conf as containerd keeps it (rewritten above)
    const hostConf = readFileSync(join(ctd.dir, 'root', 'io.containerd.grpc.v1.cri', 'sandboxes', peer.podId, 'resolv.conf'), 'utf8');
    const servers = [...hostConf.matchAll(/^nameserver\s+(\S+)/gm)].map((m) => m[1]!);
    expect(servers.length).toBeGreaterThan(0);
    expect(report.dns).toMatchObject({ source: 'resolv.conf', servers, resolvConf: hostConf });
    const dns = report.paths.filter((p) => p.kind === 'dns');
    expect(dns.map((p) => p.to)).toEqual(servers.map((s) => (s.includes(':') ? `[${s}]:53` : `${s}:53`)));
    // nothing answers DNS on the gateway: the path fails, and the exit code and stderr say so
    const silent = dns.find((p) => p.verdict !== 'reachable');
    expect(silent).toBeDefined();
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toContain(`dns pod → ${silent!.to}`);
    expect(report.paths.filter((p) => p.kind !== 'dns').every((p) => p.verdict === 'reachable')).toBe(true);
  });

  it("probe --trace names portmap's DNAT rule with containerd's network and sandbox id", async () => {
    const r = await podscope('probe', '--endpoint', endpoint, '--trace', '-o', 'json', pod.podId);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { paths: JsonPath[] };
    // every traced host-port path (127.0.0.1, the gateway's v4 and v6 addresses): a trace that lost the kernel's
    // events under load says so in its own report, and the others still name the rule
    const traced = report.paths.filter((p) => p.kind === 'hostPort' && p.trace);
    expect(traced.length).toBeGreaterThan(0);
    const owners = traced.flatMap((p) => p.trace!.steps.flatMap((s) => (s.owner ? [s.owner] : [])));
    expect(owners).toContainEqual(expect.objectContaining({ plugin: 'portmap', network: ctd.bridge, sandboxId: pod.podId }));
  });

  it('topology draws the pod: eth0 → its host veth → the bridge', async () => {
    const r = await podscope('topology', '--endpoint', endpoint, '-o', 'json', pod.podId);
    expect(r.code, r.stderr).toBe(0);
    const t = JSON.parse(r.stdout) as { nodes: Array<{ kind: string; name: string }> };
    expect(t.nodes.map((n) => n.name)).toEqual(expect.arrayContaining(['eth0', ctd.bridge]));
  });

  it("inspectp --live reads the pod's addresses, tbf rates and DNAT rules against its config", async () => {
    const r = await podscope('inspectp', '--endpoint', endpoint, '--live', '-o', 'json', pod.podId);
    expect(r.code, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout) as {
      live: {
        interfaces: Array<{ name: string }>;
        bandwidth: Array<{ ok?: boolean; matches?: boolean }>;
        ports: Array<{ found?: boolean; ok?: boolean }>;
      };
    };
    expect(v.live.interfaces.map((i) => i.name)).toContain('eth0');
    expect(v.live.bandwidth.length).toBeGreaterThan(0);
    expect(v.live.ports.length).toBe(1);
  });

  it("throughput measures each way through the veth against the tbf containerd's bandwidth plugin made", async () => {
    // the default bound: the transfer stops once the rate past the burst is known precisely (about a second when the
    // machine is quiet); under the suite's load a 2 s bound, and at a load of 15 a 5 s one, ended before the knee
    const r = await podscope('throughput', '--endpoint', endpoint, '-o', 'json', pod.podId);
    expect(r.code, r.stderr).toBe(0);
    const t = JSON.parse(r.stdout) as {
      throughput: Record<'ingress' | 'egress', { requestedBps: number; appliedBps: number; verdict: string }>;
    };
    for (const d of [t.throughput.ingress, t.throughput.egress]) {
      expect(d.requestedBps).toBe(10_000_000);
      expect(d.appliedBps).toBe(10_000_000);
      expect(d.verdict).toBe('shaped');
    }
  });

  it('cnicheck runs CHECK through the cached conflist with the cached result, and STATUS (a 1.0.0 list has none)', async () => {
    const r = await podscope('cnicheck', '--endpoint', endpoint, '-o', 'json', pod.podId);
    const { check, status } = JSON.parse(r.stdout) as {
      check: {
        networks: Array<{ network: string; outcome: string; message: string; entries: Array<{ plugin?: { type: string; verb: string } }> }>;
      };
      status: { networks: Array<{ network: string; outcome: string }> };
    };
    expect(check.networks.map((n) => n.network)).toEqual(['cni-loopback', ctd.bridge]);
    expect(check.networks[0]!.outcome).toBe('notSupported');
    const eth0 = check.networks[1]!;
    // the plugins ran CHECK (never ADD or DEL); bridge 1.1.1 reports the range route it installed via the gateway as
    // missing without one (pkg/ip's route check, plugins#886): a known defect, so the rest of the chain is checked too
    expect(eth0.entries.flatMap((e) => (e.plugin ? [e.plugin.verb] : []))).toEqual(expect.arrayContaining(['CHECK']));
    expect(eth0.entries.every((e) => !e.plugin || e.plugin.verb === 'CHECK')).toBe(true);
    expect(
      eth0.entries.flatMap((e) => (e.plugin ? [e.plugin.type] : [])),
      `${eth0.outcome}: ${eth0.message}`,
    ).toEqual(expect.arrayContaining(['bridge', 'portmap']));
    expect(eth0.outcome, eth0.message).toBe('passed');
    expect(status.networks.map((n) => [n.network, n.outcome])).toEqual([
      ['cni-loopback', 'notSupported'],
      [ctd.bridge, 'notSupported'],
    ]);
  });
});

/** Everything a measurement could leave behind on the node, as text to compare. */
function nodeSnapshot(podId: string, netnsPath: string): Record<string, unknown> {
  const host = netfilterOf();
  const pod = netfilterOf(netnsPath);
  return {
    iptables: host.iptables,
    ip6tables: host.ip6tables,
    nft: host.nft,
    podIptables: pod.iptables,
    podIp6tables: pod.ip6tables,
    podNft: pod.nft,
    tracefs: tracefsInstances(),
    cache: cniCacheOf(podId),
    podProcesses: processesIn(netnsPath),
  };
}

describe("a foreign DROP and the lab's compare, on containerd's pods", () => {
  it("a DROP in FORWARD on the web pod's declared port 80: the peer's port path fails naming the rule, owned by nobody", async () => {
    const status = JSON.parse((await podscope('inspectp', '--endpoint', endpoint, '-o', 'json', pod.podId)).stdout) as {
      ip?: string;
      status?: { ip?: string };
    };
    const ip = status.ip ?? status.status?.ip;
    expect(ip).toMatch(/^10\./);
    // the comment carries this file's lease: a parallel file's rules are never matched, and only ours is removed
    const mark = lease.name('-fwd80');
    const rule = ['FORWARD', '-d', `${ip}/32`, '-p', 'tcp', '--dport', '80', '-m', 'comment', '--comment', mark, '-j', 'DROP'];
    execFileSync('iptables', ['-I', ...rule]);
    let r: { code: number; stdout: string; stderr: string };
    try {
      r = await podscope('probe', '--endpoint', endpoint, '--trace', '-o', 'json', pod.podId);
    } finally {
      execFileSync('iptables', ['-D', ...rule]);
    }
    expect(r.code, r.stderr).toBe(5);
    const report = JSON.parse(r.stdout) as { paths: Array<JsonPath & { declaredBy?: string; listener?: string; why?: string }> };
    // the peer connects to port 80, which the web pod declares (its port mapping) and containerd's httpd answers
    const toPort = report.paths.find((p) => p.kind === 'peerPort' && p.to === `${ip}:80` && p.from !== 'pod')!;
    expect(toPort).toMatchObject({ verdict: 'timeout', listener: 'existing' });
    const decisive = toPort.trace!.steps.find((s) => (s as { decisive?: boolean }).decisive) as
      | { kind: string; chain?: string; verdict?: string; rule?: string; owner?: unknown }
      | undefined;
    expect(decisive).toMatchObject({ kind: 'netfilter', chain: 'FORWARD', verdict: 'DROP', owner: null });
    expect(decisive!.rule).toContain(mark);
    // the network path between the same pods (a port the probe picked) is not stopped by a rule on port 80
    expect(report.paths.find((p) => p.kind === 'peer' && p.to.startsWith(`${ip}:`) && p.from !== 'pod')?.verdict).toBe('reachable');
  });

  it("lab diff against the web pod's ADD as libcni's cache keeps it: plugin by plugin, from a lab run of the same shape", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podscope-ctd-lab-'));
    const bridge = lease.name('lab');
    const flags = [
      '--state-dir',
      join(dir, 'state'),
      '--run-dir',
      join(dir, 'run'),
      '--netns-dir',
      join(dir, 'netns'),
      '--cni-cache-dir',
      join(dir, 'cache'),
    ];
    try {
      // containerd's network, made by the builder that made containerd's own, on a bridge and subnet of this file's lease
      const conflist = testConflist({ bridge, subnet: lease.octet, ipv4Cidr: lease.subnet4(7) }, join(dir, 'ipam'));
      writeFileSync(join(dir, 'net.conflist'), JSON.stringify(conflist));
      const run = await podscope(...flags, 'lab', 'run', join(dir, 'net.conflist'), '-o', 'json');
      expect(run.code, run.stderr).toBe(0);
      const runId = (JSON.parse(run.stdout) as { id: string }).id;
      const r = await podscope(...flags, 'lab', 'diff', runId, `sandbox:${pod.podId}`, '--endpoint', endpoint, '-o', 'json');
      expect(r.code, r.stderr).toBe(0);
      const d = JSON.parse(r.stdout) as {
        a: { kind: string; id: string };
        b: { kind: string; id: string };
        plugins: Array<{ phase: string; type: string; present: string; stdin: Array<{ path: string }> }>;
        notes: string[];
      };
      expect(d.a).toMatchObject({ kind: 'run', id: runId });
      expect(d.b).toMatchObject({ kind: 'sandbox', id: pod.podId });
      // the ADD of each plugin on both sides, aligned; the bridge's stdin differs in its bridge name and range
      const adds = d.plugins.filter((p) => p.phase === 'ADD');
      expect(adds.map((p) => [p.type, p.present])).toEqual(
        expect.arrayContaining([
          ['bridge', 'both'],
          ['portmap', 'both'],
          ['bandwidth', 'both'],
        ]),
      );
      const bridgeStdin = adds.find((p) => p.type === 'bridge')!.stdin.map((c) => c.path);
      expect(bridgeStdin).toEqual(expect.arrayContaining(['bridge']));
      // what the cache does not keep is said, not invented
      expect(d.notes.join(' ')).toMatch(/cache/i);
    } finally {
      // the bridge plugin keeps its bridge by design: this test's to remove
      try {
        execFileSync('ip', ['link', 'del', bridge], { stdio: 'ignore' });
      } catch {
        /* never made */
      }
      // the engine makes its netns dir a mount point of its own (as /var/run/netns is)
      try {
        execFileSync('umount', ['-l', join(dir, 'netns')], { stdio: 'ignore' });
      } catch {
        /* not mounted */
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('read-only: every verb leaves the node as it found it', () => {
  const verbs: string[][] = [
    ['probe'],
    ['probe', '--trace'],
    ['topology'],
    ['inspectp', '--live'],
    ['throughput', '--duration', '1000'],
    ['cnicheck'],
  ];
  it.each(verbs.map((v) => [v.join(' '), v] as const))('%s', async (_name, verb) => {
    const [first] = await ctd.api.foreignSandboxes([pod.podId]);
    const netns = (
      first!.verbose as { runtimeSpec: { linux: { namespaces: Array<{ type: string; path?: string }> } } }
    ).runtimeSpec.linux.namespaces.find((n) => n.type === 'network')!.path!;
    const before = nodeSnapshot(pod.podId, netns);
    await podscope(verb[0]!, '--endpoint', endpoint, ...verb.slice(1), pod.podId);
    expect(nodeSnapshot(pod.podId, netns)).toEqual(before);
    expect((await ctd.api.status(pod.podId)).state).toBe('SANDBOX_READY');
    expect((await ctd.api.containerStatus(pod.containerId)).state).toBe('CONTAINER_RUNNING');
  });
});

interface CheckNetwork {
  network: string;
  outcome: string;
  message: string;
  knownDefect?: { type: string; reference: string };
  entries: Array<{
    ok?: boolean;
    plugin?: { type: string; verb: string };
    error?: { message: string; details?: { knownDefect?: { reference: string } } };
  }>;
}

describe("CHECK on containerd's pod after a rule is deleted by hand", () => {
  /** portmap's IPv4 DNAT rule for the pod's host port, as iptables-save prints it, and its place in its chain */
  const dnatRule = (hostPort: number) => {
    const lines = execFileSync('iptables-save', ['-t', 'nat'], { encoding: 'utf8' }).split('\n');
    const rule = lines.find((l) => /^-A CNI-DN-\S+ /.test(l) && l.includes(`--dport ${hostPort} `) && l.includes('-j DNAT'));
    if (!rule) throw new Error(`no DNAT rule for host port ${hostPort} in iptables-save -t nat`);
    const chain = rule.split(' ')[1]!;
    const position = lines.filter((l) => l.startsWith(`-A ${chain} `)).indexOf(rule) + 1;
    // the rule carries no quoted comment (portmap comments the jumps to its chain, not the DNAT inside it)
    return { rule, chain, position, args: rule.split(' ').slice(2) };
  };

  it("bridge's route check is the known defect (amber, the chain goes on); portmap's CHECK fails naming the missing DNAT rule", async () => {
    const { rule, chain, position, args } = dnatRule(pod.hostPort);
    execFileSync('iptables', ['-t', 'nat', '-D', chain, ...args]);
    let report: { check: { networks: CheckNetwork[] } };
    try {
      const r = await podscope('cnicheck', '--endpoint', endpoint, '-o', 'json', pod.podId);
      report = JSON.parse(r.stdout) as typeof report;
    } finally {
      // the pod is left as found: the rule back at its place in portmap's chain
      execFileSync('iptables', ['-t', 'nat', '-I', chain, String(position), ...args]);
    }
    expect(dnatRule(pod.hostPort).rule).toBe(rule);
    const eth0 = report.check.networks.find((n) => n.network === ctd.bridge)!;
    const checks = eth0.entries.filter((e) => e.plugin?.verb === 'CHECK');
    // bridge ran and failed only by its release's route check: recognised, and portmap was still checked after it
    expect(checks.map((e) => e.plugin!.type)).toEqual(expect.arrayContaining(['bridge', 'portmap']));
    const bridge = checks.find((e) => e.plugin!.type === 'bridge')!;
    expect(bridge.error?.details?.knownDefect).toMatchObject({ reference: 'https://github.com/containernetworking/plugins/issues/886' });
    const portmap = checks.find((e) => e.plugin!.type === 'portmap')!;
    expect(portmap.ok).toBe(false);
    expect(eth0.outcome).toBe('failed');
    // the rule it could not find: this host port to the pod's IPv4 address
    const ip = (await ctd.api.status(pod.podId)).ip;
    expect(portmap.error!.message).toMatch(/could not check ipv4 dnat/);
    expect(portmap.error!.message).toContain(`--dport ${pod.hostPort}`);
    expect(portmap.error!.message).toContain(`--to-destination ${ip}:80`);
    expect(eth0.message).toContain('portmap');
  });
});
