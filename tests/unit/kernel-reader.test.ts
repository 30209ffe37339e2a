/**
 * The one kernel reader: its parsers over output recorded on a Debian 12 host (iproute2 6.1, iptables 1.8.9 with
 * nf_tables; the JSON re-indented by prettier) in a throwaway netns holding a bridge with a hairpin port, a veth
 * whose peer is in another netns, a tbf + ingress qdisc, policy rules of both families and nat/filter rules of both
 * families; and the reader itself over a scripted ProcessRunner.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasCode } from '../../shared/domain/errors';
import { kernelCommands } from '../../electron/engine/kernel/commands';
import { LinuxKernelReader } from '../../electron/engine/kernel/linux-reader';
import { parseSave, ruleSpecLines, ruleWords, tablesOf } from '../../electron/engine/kernel/netfilter';
import {
  isSysctlName,
  parseBridgePorts,
  parseFilters,
  parseLinks,
  parseQdiscs,
  parseRoutes,
  parseRules,
  parseSysctlLines,
  sysctlPath,
} from '../../electron/engine/kernel/parse';
import { KernelLabSnapshotReader } from '../../electron/engine/lab/kernel';
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';
import { ScriptedRunner } from '../../testkit/fakes/scripted-runner';
import { LinuxProbeNet } from '../../electron/engine/netns/linux-probe-net';
import { buildTopology } from '../../electron/engine/topology/build';
import { KernelTopologyReader } from '../../electron/engine/topology/reader';
import { noOwners } from '../../electron/engine/topology/owners';

const fixture = (name: string) => readFileSync(join(__dirname, '../fixtures/kernel', name), 'utf8');
const lines = (name: string) => fixture(name).split('\n').filter(Boolean);

describe('parse: links, routes, rules, qdiscs, bridge ports, sysctls', () => {
  it('links: kind, master, hairpin, the peer by name (same netns) or by ifindex and netns id, state and addresses', () => {
    const links = parseLinks(fixture('ip-addr.json'));
    expect(links.map((l) => l.name)).toEqual(['lo', 'd1', 'd0', 'ktbr0', 'p0']);
    const [lo, d1, d0, br, p0] = links;
    expect(lo).toMatchObject({ ifindex: 1, state: 'UNKNOWN', mtu: 65536 });
    expect(lo!.kind).toBeUndefined();
    expect(d1).toMatchObject({ kind: 'veth', slaveKind: 'bridge', master: 'ktbr0', hairpin: true, peerName: 'd0', state: 'UP' });
    expect(br).toMatchObject({ kind: 'bridge' });
    expect(br!.addresses[0]).toEqual({ family: 4, address: '10.150.10.1', prefixLen: 24, scope: 'global' });
    expect(p0).toMatchObject({ kind: 'veth', peerIfindex: 2, peerNetnsId: 0 });
    expect(p0!.peerName).toBeUndefined();
    expect(d0!.addresses).toEqual([
      { family: 4, address: '10.150.9.1', prefixLen: 24, scope: 'global' },
      { family: 6, address: 'fd00:150:9::1', prefixLen: 64, scope: 'global' },
      { family: 6, address: 'fe80::58db:10ff:fedd:f356', prefixLen: 64, scope: 'link' },
    ]);
    expect(d0!.flags).toContain('UP');
    // the peer netns sees the other end, pointing back by ifindex
    expect(parseLinks(fixture('ip-addr-peer-netns.json')).find((l) => l.name === 'p1')).toMatchObject({ peerIfindex: 5, peerNetnsId: 0 });
  });

  it('routes of every table: main-table routes carry no table name and read as "main"', () => {
    const v4 = parseRoutes(fixture('ip-route-4.json'), 4);
    expect(v4.filter((r) => r.table === 'main').map((r) => r.dst)).toEqual(['default', '10.150.9.0/24', '10.150.10.0/24']);
    expect(v4.find((r) => r.table === '100')).toEqual({ family: 4, table: '100', dst: '10.150.8.0/24', gateway: '10.150.9.3', dev: 'd0' });
    expect(v4.find((r) => r.dst === '10.150.9.1')).toMatchObject({ table: 'local', type: 'local', scope: 'host' });
    const v6 = parseRoutes(fixture('ip-route-6.json'), 6);
    expect(v6[0]).toEqual({ family: 6, table: 'main', dst: 'fd00:150:9::/64', dev: 'd0', protocol: 'kernel', metric: 256 });
    expect(v6.filter((r) => r.type === 'multicast')).toHaveLength(3);
  });

  it('policy rules of both families: selector address and length joined, fwmark and table kept', () => {
    expect(parseRules(fixture('ip-rule-4.json'), 4)).toEqual([
      { family: 4, priority: 0, from: 'all', table: 'local' },
      { family: 4, priority: 100, from: '10.150.9.0/24', table: '100' },
      { family: 4, priority: 32766, from: 'all', table: 'main' },
      { family: 4, priority: 32767, from: 'all', table: 'default' },
    ]);
    expect(parseRules(fixture('ip-rule-6.json'), 6)[1]).toEqual({ family: 6, priority: 200, from: 'all', fwmark: '0x10', table: '200' });
  });

  it('qdiscs: tbf rate in bytes per second, burst and latency; the ingress qdisc is not at the root', () => {
    const q = parseQdiscs(fixture('tc-qdisc.json'));
    expect(q.find((x) => x.kind === 'tbf')).toEqual({
      dev: 'd0',
      kind: 'tbf',
      handle: '8001:',
      root: true,
      rateBytesPerSecond: 1_250_000,
      burstBytes: 32767,
      latencyMicroseconds: 25000,
    });
    expect(q.find((x) => x.kind === 'ingress')).toEqual({ dev: 'd0', kind: 'ingress', handle: 'ffff:', root: false, parent: 'ffff:fff1' });
  });

  it('qdiscs of one device: tc leaves the device out of each entry, the parse puts it back', () => {
    expect(parseQdiscs(fixture('tc-qdisc-dev.json'), 'kt-h0').map((q) => [q.dev, q.kind, q.root])).toEqual([
      ['kt-h0', 'tbf', true],
      ['kt-h0', 'ingress', false],
    ]);
  });

  it('bridge ports: master, state and hairpin', () => {
    expect(parseBridgePorts(fixture('bridge-link.json'))).toEqual([
      { ifindex: 2, name: 'd1', master: 'ktbr0', state: 'forwarding', hairpin: true },
    ]);
  });

  it('sysctls: path per name (a dotted interface is written with a slash), values with tabs and empty values', () => {
    expect(sysctlPath('net.ipv4.conf.eth0/100.forwarding')).toBe('/proc/sys/net/ipv4/conf/eth0.100/forwarding');
    expect(parseSysctlLines(fixture('sysctl-grep.txt'))).toEqual({
      'net.ipv4.ip_forward': '0',
      'net.ipv4.conf.d0.rp_filter': '0',
      'net.ipv4.ip_local_port_range': '32768\t60999',
      'net.ipv4.ip_local_reserved_ports': '',
    });
    expect(['net.ipv4.ip_forward', 'net.ipv4.conf.eth0/100.forwarding'].every(isSysctlName)).toBe(true);
    expect(['net', 'net..ipv4', 'net.ipv4.../../etc', '/etc/passwd', 'net.ipv4 x', ''].some(isSysctlName)).toBe(false);
  });

  it('rejects output that is not a JSON array', () => {
    expect(() => parseLinks('{"ifname":"lo"}')).toThrow(/JSON array/);
    expect(parseLinks('')).toEqual([]);
  });
});

describe('parse: netfilter from iptables-save and ip6tables-save', () => {
  const v4 = parseSave(fixture('iptables-save.txt'), 4);
  const v6 = parseSave(fixture('ip6tables-save.txt'), 6);

  it('tables, chains with their policies (none for a user chain), rules with comment and target', () => {
    expect(v4.map((t) => t.name)).toEqual(['filter', 'nat']);
    const nat = v4.find((t) => t.name === 'nat')!;
    expect(nat.chains).toEqual([
      { name: 'PREROUTING', policy: 'ACCEPT' },
      { name: 'INPUT', policy: 'ACCEPT' },
      { name: 'OUTPUT', policy: 'ACCEPT' },
      { name: 'POSTROUTING', policy: 'ACCEPT' },
      { name: 'KT-TEST' },
    ]);
    expect(nat.rules[0]).toMatchObject({ chain: 'POSTROUTING', comment: 'name: "x" id: "y"', target: 'MASQUERADE' });
    expect(v4.find((t) => t.name === 'filter')!.rules[0]).toMatchObject({ chain: 'FORWARD', comment: 'plain', target: 'ACCEPT' });
  });

  it('reads the IPv6 DNAT rules, with their bracketed destinations', () => {
    const dnat = v6.flatMap((t) => t.rules).filter((r) => r.target === 'DNAT');
    expect(dnat.map((r) => [r.chain, r.comment, r.args.at(-1)])).toEqual([
      ['KT6', 'dnat name: "n" id: "z"', '[fd00:150:9::2]:8080'],
      ['KT6', 'kt-plain', '[fd00:150:9::3]:53'],
    ]);
    expect(v6.every((t) => t.family === 6)).toBe(true);
  });

  it('prints each table back exactly as `iptables -t <table> -S` listed it, an absent table with its default policies', () => {
    for (const table of ['nat', 'filter']) {
      expect(ruleSpecLines(tablesOf(v4, 4), table)).toEqual(lines(`iptables-${table}-S.txt`));
      expect(ruleSpecLines(tablesOf(v6, 6), table)).toEqual(lines(`ip6tables-${table}-S.txt`));
    }
  });

  it('splits a rule back into argv (quotes and escaped quotes of a comment undone)', () => {
    expect(ruleWords('-A X -m comment --comment "a \\"b\\" c" -j ACCEPT')).toEqual([
      '-A',
      'X',
      '-m',
      'comment',
      '--comment',
      'a "b" c',
      '-j',
      'ACCEPT',
    ]);
  });
});

/** the reader over a scripted runner: a command line without an answer fails, as on a host without that tool */
const scripted = (answers: Record<string, Partial<ExecResult>>) => new ScriptedRunner(answers, { strict: true });

describe('LinuxKernelReader', () => {
  const NS = '/run/netns/pod';
  const cmd = (c: { file: string; args: string[] }) => [c.file, ...c.args].join(' ');

  it('reads a pod netns through nsenter: only what the query asks for, both families where there are two', async () => {
    const runner = scripted({
      [cmd(kernelCommands.links(NS))]: { stdout: fixture('ip-addr.json') },
      [cmd(kernelCommands.routes(4, NS))]: { stdout: fixture('ip-route-4.json') },
      [cmd(kernelCommands.routes(6, NS))]: { stdout: fixture('ip-route-6.json') },
      [cmd(kernelCommands.netfilter(4, NS))]: { stdout: fixture('iptables-save.txt') },
      [cmd(kernelCommands.netfilter(6, NS))]: { stdout: fixture('ip6tables-save.txt') },
    });
    const s = await new LinuxKernelReader(runner).read(NS, { links: true, routes: true, netfilter: true });
    expect(s.errors).toEqual([]);
    expect(runner.lines.every((l) => l.startsWith(`nsenter --net=${NS} `))).toBe(true);
    expect(runner.lines).toHaveLength(5);
    expect(s.links).toHaveLength(5);
    expect(new Set(s.routes.map((r) => r.family))).toEqual(new Set([4, 6]));
    expect(s.netfilter.map((t) => `${t.family}/${t.name}`)).toEqual(['4/filter', '4/nat', '6/nat']);
    expect(s.qdiscs).toEqual([]);
  });

  it('a failed or unparseable command is an error of the read; the rest is still read', async () => {
    const runner = scripted({
      'ip -d -j addr show': { stdout: 'not json' },
      'tc -j qdisc show dev gone0': { exitCode: 1, stderr: 'Cannot find device "gone0"\n' },
      'tc -j qdisc show dev kt-h0': { stdout: fixture('tc-qdisc-dev.json') },
    });
    const s = await new LinuxKernelReader(runner).read(undefined, { links: true, qdiscs: { devices: ['gone0', 'kt-h0'] } });
    expect(s.errors).toHaveLength(2);
    expect(s.errors).toContain('tc -j qdisc show dev gone0: Cannot find device "gone0"');
    expect(s.errors.some((e) => e.startsWith('ip -d -j addr show: unparseable output: '))).toBe(true);
    expect(s.links).toEqual([]);
    expect(s.qdiscs.map((q) => [q.dev, q.kind])).toEqual([
      ['kt-h0', 'tbf'],
      ['kt-h0', 'ingress'],
    ]);
  });

  it('sysctls: a name the kernel lacks is an error and left out; a name that is no sysctl is refused before anything runs', async () => {
    const names = ['net.ipv4.ip_forward', 'net.ipv4.nope'];
    const runner = scripted({
      [cmd(kernelCommands.sysctls(names, NS))]: { exitCode: 2, stdout: '/proc/sys/net/ipv4/ip_forward:1\n' },
    });
    const reader = new LinuxKernelReader(runner);
    const s = await reader.read(NS, { sysctls: names });
    expect(s.sysctls).toEqual({ 'net.ipv4.ip_forward': '1' });
    expect(s.errors).toEqual([`sysctl net.ipv4.nope: not readable in ${NS}`]);
    await expect(reader.read(NS, { sysctls: ['net/../../etc/shadow'] })).rejects.toSatisfy((e) => hasCode(e, 'InvalidArgument'));
    expect(runner.lines).toHaveLength(1);
  });

  it('sysctls: nsenter failing to enter the netns fails the read with its own words', async () => {
    const runner = scripted({
      [cmd(kernelCommands.sysctls(['net.ipv4.ip_forward'], NS))]: {
        exitCode: 1,
        stderr: 'nsenter: cannot open /run/netns/pod: No such file',
      },
    });
    const s = await new LinuxKernelReader(runner).read(NS, { sysctls: ['net.ipv4.ip_forward'] });
    expect(s.errors).toEqual([expect.stringContaining('nsenter: cannot open /run/netns/pod')]);
  });
});

describe('the readers over it keep their own shapes', () => {
  const RECORDED: Record<string, string> = {
    'ip -d -j addr show': 'ip-addr.json',
    'ip -j -4 route show table all': 'ip-route-4.json',
    'ip -j -6 route show table all': 'ip-route-6.json',
    'ip -j -4 rule show': 'ip-rule-4.json',
    'ip -j -6 rule show': 'ip-rule-6.json',
    'bridge -d -j link show': 'bridge-link.json',
    'tc -j qdisc show': 'tc-qdisc.json',
    'iptables-save': 'portmap-dual-iptables-save.txt',
    'iptables-save -t nat': 'portmap-dual-iptables-save.txt',
    'ip6tables-save': 'portmap-dual-ip6tables-save.txt',
    'ip6tables-save -t nat': 'portmap-dual-ip6tables-save.txt',
  };
  /** answers every command of the host from the recorded files; a pod netns (through nsenter) from the peer netns' */
  const recorded: ProcessRunner = {
    async run(req: ExecRequest): Promise<ExecResult> {
      const args = req.args ?? [];
      const inPod = req.file === 'nsenter';
      const [file, ...rest] = inPod ? args.slice(1) : [req.file, ...args];
      const line = [file, ...rest].join(' ');
      const recordedFile = line === 'ip -d -j addr show' && inPod ? 'ip-addr-peer-netns.json' : RECORDED[line];
      const stdout = recordedFile ? fixture(recordedFile) : '[]';
      return { command: line, exitCode: 0, signal: null, stdout, stderr: '', durationMs: 1, timedOut: false, canceled: false };
    },
  };
  const kernel = new LinuxKernelReader(recorded);

  it("topology: the host and the pod netns read at once, the builder finds the veth's peer by ifindex and the bridge port", async () => {
    const raw = await new KernelTopologyReader(kernel).read(['/run/netns/peer']);
    expect(raw.errors).toEqual([]);
    expect(raw.host.links.find((l) => l.name === 'p0')).toMatchObject({ ifindex: 5, peerIfindex: 2, peerNetnsId: 0, kind: 'veth' });
    expect(raw.host.links.find((l) => l.name === 'd1')).toMatchObject({ master: 'ktbr0', kind: 'veth', slaveKind: 'bridge' });
    expect(raw.host.bridgePorts).toEqual([{ ifindex: 2, name: 'd1', master: 'ktbr0', state: 'forwarding', hairpin: true }]);
    expect(raw.host.routes.length).toBeGreaterThan(0);
    const { edges } = buildTopology(raw, [{ sandboxId: 's', netnsPath: '/run/netns/peer', owners: noOwners() }]);
    expect(edges).toContainEqual({ from: 'pod:s:p1', to: 'host:p0', kind: 'veth' });
  });

  it('lab snapshot: one line per fact, the nat and filter tables of each family as -S lists them, prefixed by table', async () => {
    const { snapshot, errors } = await new KernelLabSnapshotReader(kernel).read({
      netns: '/run/netns/peer',
      ipamDirs: [],
      cacheResultsDir: '/nonexistent',
      containerId: 'x',
    });
    expect(errors).toEqual([]);
    expect(snapshot.link).toContain('d1 veth mtu 1500 master ktbr0 hairpin on');
    expect(snapshot['host-address']).toContain('d0 10.150.9.1/24');
    expect(snapshot.qdisc).toContain('dev d0 tbf 8001: root rate 1250000 burst 32767');
    // every table but the kernel's own `local` one, which only mirrors the addresses
    expect(snapshot['netns-route']).toEqual([
      'ipv4 10.150.8.0/24 via 10.150.9.3 dev d0 table 100',
      'ipv4 default via 10.150.9.254 dev d0',
      'ipv4 10.150.9.0/24 dev d0 proto kernel scope link',
      'ipv4 10.150.10.0/24 dev ktbr0 proto kernel scope link',
      'ipv6 fd00:150:9::/64 dev d0 proto kernel',
      'ipv6 fe80::/64 dev d1 proto kernel',
      'ipv6 fe80::/64 dev d0 proto kernel',
      'ipv6 fe80::/64 dev ktbr0 proto kernel',
    ]);
    expect(snapshot['netns-route'].some((l) => l.includes('table local'))).toBe(false);
    expect(snapshot['netns-rule']).toContain('ipv4 100: from 10.150.9.0/24 lookup 100');
    expect(snapshot['netns-rule']).toContain('ipv6 200: from all fwmark 0x10 lookup 200');
    expect(snapshot['host-route']).toContain('ipv4 10.150.8.0/24 via 10.150.9.3 dev d0 table 100');
    expect(snapshot.ip6tables).toContain(
      'nat -A CNI-DN-d2efcb24d383b390721b1 -p tcp -m tcp --dport 18080 -j DNAT --to-destination [fd00:150:20::2]:80',
    );
    // no filter table in the save: listed with its default policies, as -S does
    expect(snapshot.iptables.filter((l) => l.startsWith('filter '))).toEqual([
      'filter -P INPUT ACCEPT',
      'filter -P FORWARD ACCEPT',
      'filter -P OUTPUT ACCEPT',
    ]);
  });

  it("probe: portmap's CNI-HOSTPORT-DNAT jumps of both families, in chain order", async () => {
    const rules = await new LinuxProbeNet(recorded, undefined, kernel).hostportDnatRules();
    expect(rules.v4).toHaveLength(1);
    expect(rules.v6).toHaveLength(1);
    expect(rules.v6[0]).toMatch(/^-A CNI-HOSTPORT-DNAT -p tcp .*--dports 18080 -j CNI-DN-d2efcb24d383b390721b1$/);
  });
});

describe('parse: what the topology needs beyond links (recorded with ptp, macvlan, host-device and bandwidth)', () => {
  const topo = (name: string) => readFileSync(join(__dirname, '../fixtures/kernel/topology', name), 'utf8');

  it("a macvlan names its parent by ifindex and netns id, with its mode; a moved link keeps host-device's alias", () => {
    expect(parseLinks(topo('ptpx2-ip-addr.json')).find((l) => l.name === 'eth0')).toMatchObject({
      kind: 'macvlan',
      mode: 'bridge',
      peerIfindex: 1187,
      peerNetnsId: 0,
    });
    expect(parseLinks(topo('ptpx3-ip-addr.json')).find((l) => l.name === 'eth0')).toMatchObject({ kind: 'veth', alias: 'ptpxc' });
  });

  it("tc filters: the header entries carry no action, the u32 entry carries bandwidth's mirred redirects to the ifb", () => {
    const filters = parseFilters(topo('host-tc-filter-ingress.json'), 'vethee2fcdad');
    expect(filters).toHaveLength(3);
    expect(filters.every((f) => f.dev === 'vethee2fcdad' && f.parent === 'ffff:' && f.kind === 'u32')).toBe(true);
    expect(filters[2]!.actions[0]).toEqual({ kind: 'mirred', action: 'redirect', direction: 'egress', toDev: 'bwpdefe712dc431' });
    expect(filters.slice(0, 2).every((f) => f.actions.length === 0)).toBe(true);
  });

  it('the reader asks tc for the ingress filters of exactly the devices named', async () => {
    const cmd = (c: { file: string; args: string[] }) => [c.file, ...c.args].join(' ');
    const runner = scripted({
      [cmd(kernelCommands.ingressFilters('vethee2fcdad'))]: { stdout: topo('host-tc-filter-ingress.json') },
    });
    const s = await new LinuxKernelReader(runner).read(undefined, { ingressFilters: { devices: ['vethee2fcdad'] } });
    expect(runner.lines).toEqual(['tc -j filter show dev vethee2fcdad ingress']);
    expect(s.ingressFilters.flatMap((f) => f.actions.map((a) => a.toDev))).toEqual(['bwpdefe712dc431', 'bwpdefe712dc431']);
  });
});
