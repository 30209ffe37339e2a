/**
 * The CNI plugin exec boundary, faked: a ProcessRunner that answers the real CniManager's execs of the stub files in
 * its bin dir the way the reference plugins would (loopback, bridge with host-local IPAM, portmap, bandwidth; any
 * other chained type passes prevResult through), and records what they did to the host in a FakeKernel. Planning,
 * chaining, caching, CHECK and DEL ordering are the engine's own: only the plugins' side of the exec is simulated.
 * Faults make a given plugin (by network and position) fail a verb with CNI error JSON, hang until the timeout or a
 * cancel, or print output that is not a result.
 */
import { createHash } from 'node:crypto';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isIP } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import type { CniResult } from '../../shared/domain/cni';
import type { ExecRequest, ExecResult, ProcessRunner } from '../../electron/engine/os/exec';
import { specAtLeast } from '../../electron/engine/cni/spec-version';
import { FakeKernel, type KernelOwner } from './fake-kernel';

export interface FakeNetwork {
  name: string;
  /** `lo` for the built-in loopback network; eth0, eth1, … for conf-dir networks in file order */
  ifName: string;
  cniVersion: string;
  /** plugin objects as they appear in the conflist */
  plugins: Array<Record<string, unknown>>;
  /** conflist keys besides name, cniVersion and plugins (disableCheck, …) */
  extra?: Record<string, unknown>;
}

export type FaultVerb = 'ADD' | 'DEL' | 'CHECK' | 'STATUS';

export interface PluginFault {
  verb: FaultVerb;
  network: string;
  /** position of the plugin in its list */
  index: number;
  /** the plugin's error message (`msg` of its error JSON); e.g. include "not found" to exercise Remove's tolerance */
  message?: string;
  /** the plugin's error code (default 999, the spec's internal error) */
  code?: number;
  /** error (default): error JSON on stdout, exit 1; hang: until the exec's timeout or cancel; badOutput: exit 0 with no result */
  kind?: 'error' | 'hang' | 'badOutput';
  /** fail only the next matching exec (default: every time) */
  once?: boolean;
}

export interface PluginExec {
  type: string;
  verb: string;
  network: string;
  index: number;
  env: Record<string, string>;
  stdin: string;
  exitCode: number | null;
  stdout: string;
}

/** Plugin binaries the fake answers for; each gets a stub file so the manager's lookup finds it. */
export const FAKE_PLUGIN_TYPES = [
  'loopback',
  'bridge',
  'host-local',
  'portmap',
  'bandwidth',
  'tuning',
  'firewall',
  'ptp',
  'macvlan',
  'dhcp',
];

const SUPPORTED_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'];

class PluginError extends Error {
  constructor(
    readonly code: number,
    msg: string,
  ) {
    super(msg);
  }
}

type Conf = Record<string, unknown> & { cniVersion: string; name: string; type: string; prevResult?: CniResult };

interface Env {
  command: string;
  containerId: string;
  netns: string;
  ifName: string;
}

interface IpRange {
  subnet: string;
  rangeStart?: string;
  rangeEnd?: string;
  gateway?: string;
}

/** host-local's store for one range set of one network: ip → owner, and where the last allocation stopped. */
interface RangeSetStore {
  allocated: Map<string, string>;
  last?: bigint;
}

export class FakeCniPlugins implements ProcessRunner {
  readonly kernel = new FakeKernel();
  /** every exec, in order */
  readonly execs: PluginExec[] = [];
  faults: PluginFault[] = [];
  /** the final result a network's main plugin answers ADD with instead of its own (chained plugins pass it on) */
  results: Record<string, (containerId: string, netnsPath: string) => CniResult> = {};
  /** the lists the manager was given, to tell a plugin's position from its stdin */
  networks: FakeNetwork[] = [];
  private readonly ipam = new Map<string, RangeSetStore>();
  private seq = 0;

  constructor(readonly binDir: string) {}

  /** Writes a stub file per plugin type (the manager looks binaries up before it execs them). */
  async install(types: string[] = FAKE_PLUGIN_TYPES): Promise<void> {
    await mkdir(this.binDir, { recursive: true });
    for (const t of types) {
      await writeFile(path.join(this.binDir, t), '#!/bin/false\n');
      await chmod(path.join(this.binDir, t), 0o755);
    }
  }

  /** The plugin's binary is gone: the manager's lookup fails before any exec, as on a host without it. */
  async removeBinary(type: string): Promise<void> {
    await rm(path.join(this.binDir, type), { force: true });
  }

  async run(req: ExecRequest): Promise<ExecResult> {
    const started = performance.now();
    const type = path.basename(req.file);
    const env = Object.fromEntries(Object.entries(req.env ?? {}).filter(([k]) => k.startsWith('CNI_'))) as Record<string, string>;
    const e: Env = {
      command: env.CNI_COMMAND ?? '',
      containerId: env.CNI_CONTAINERID ?? '',
      netns: env.CNI_NETNS ?? '',
      ifName: env.CNI_IFNAME ?? '',
    };
    const stdin = req.input ?? '';
    const result = (r: Partial<ExecResult>): ExecResult => ({
      command: req.file,
      exitCode: 0,
      signal: null,
      stdout: '',
      stderr: '',
      durationMs: performance.now() - started,
      timedOut: false,
      canceled: false,
      ...r,
    });
    // Node's spawn refuses these before any process starts
    for (const [k, v] of Object.entries(req.env ?? {}))
      if (v?.includes('\u0000')) throw new TypeError(`The argument 'options.env['${k}']' must be a string without null bytes`);
    if (req.signal?.aborted) return result({ exitCode: null, canceled: true });
    let conf: Conf | undefined;
    try {
      conf = JSON.parse(stdin) as Conf;
    } catch {
      /* VERSION and bad input are answered below */
    }
    const network = conf?.name ?? '';
    const index = conf ? this.indexOf(network, conf) : -1;
    const record = (r: ExecResult) => {
      this.execs.push({ type, verb: e.command, network, index, env, stdin, exitCode: r.exitCode, stdout: r.stdout });
      return r;
    };
    const fault = this.takeFault(e.command, network, index);
    if (fault?.kind === 'hang') return record(await hang(req, result));
    if (fault?.kind === 'badOutput') return record(result({ stdout: 'this is not a CNI result' }));
    if (fault) {
      const msg = fault.message ?? `fake ${e.command} failure at ${network}[${index}]`;
      return record(result({ exitCode: 1, stdout: JSON.stringify({ cniVersion: conf?.cniVersion, code: fault.code ?? 999, msg }) }));
    }
    try {
      if (e.command === 'VERSION')
        return record(
          result({ stdout: JSON.stringify({ cniVersion: conf?.cniVersion ?? '1.1.0', supportedVersions: SUPPORTED_VERSIONS }) }),
        );
      if (!conf) throw new PluginError(6, 'error parsing configuration: not JSON');
      const out = this.answer(type, e, conf);
      return record(result({ stdout: out === undefined ? '' : JSON.stringify(out) }));
    } catch (err) {
      const code = err instanceof PluginError ? err.code : 999;
      return record(result({ exitCode: 1, stdout: JSON.stringify({ cniVersion: conf?.cniVersion, code, msg: (err as Error).message }) }));
    }
  }

  private answer(type: string, e: Env, conf: Conf): CniResult | undefined {
    const owner: KernelOwner = { containerId: e.containerId, network: conf.name, ifName: e.ifName };
    if (e.command === 'STATUS') return undefined;
    if (e.command !== 'ADD' && e.command !== 'DEL' && e.command !== 'CHECK') throw new PluginError(4, `unknown CNI_COMMAND: ${e.command}`);
    if (e.command !== 'DEL' && e.netns === '') throw new PluginError(4, 'required env variables [CNI_NETNS] missing');
    switch (type) {
      case 'loopback':
        return this.loopback(e, conf, owner);
      case 'bridge':
        return this.bridge(e, conf, owner);
      case 'portmap':
        return this.portmap(e, conf);
      case 'bandwidth':
        return this.bandwidth(e, conf, owner);
      default:
        // a chained plugin that changes nothing the fakes read (tuning, firewall, …) passes its input on
        if (e.command === 'ADD' && !conf.prevResult) throw new PluginError(7, `the fake ${type} plugin only runs chained`);
        return e.command === 'ADD' ? conf.prevResult : undefined;
    }
  }

  private loopback(e: Env, conf: Conf, owner: KernelOwner): CniResult | undefined {
    if (e.command === 'DEL') {
      this.kernel.removePodLink(e.netns, e.ifName);
      return undefined;
    }
    if (e.command === 'CHECK') {
      if (!this.kernel.podLinks(e.netns).some((l) => l.name === e.ifName)) throw new PluginError(999, `${e.ifName} is not up`);
      return undefined;
    }
    const addresses = ['127.0.0.1/8', '::1/128'];
    this.kernel.addPodLink(e.netns, { name: e.ifName, mac: '00:00:00:00:00:00', kind: 'loopback', addresses, routes: [], owner });
    return versioned(conf.cniVersion, {
      cniVersion: conf.cniVersion,
      interfaces: [{ name: e.ifName, mac: '00:00:00:00:00:00', sandbox: e.netns }],
      ips: addresses.map((address) => ({ address, interface: 0 })),
      dns: {},
    });
  }

  private bridge(e: Env, conf: Conf, owner: KernelOwner): CniResult | undefined {
    const bridgeName = typeof conf.bridge === 'string' ? conf.bridge : 'cni0';
    const ownerKey = `${e.containerId}/${e.ifName}`;
    if (e.command === 'DEL') {
      this.release(conf.name, ownerKey);
      const link = this.kernel.removePodLink(e.netns, e.ifName);
      if (link?.peer) this.kernel.host.delete(link.peer);
      return undefined;
    }
    if (e.command === 'CHECK') {
      const link = this.kernel.podLinks(e.netns).find((l) => l.name === e.ifName);
      if (!link) throw new PluginError(999, `Error: Container Interface name in prevResult: ${e.ifName} not found`);
      for (const ip of conf.prevResult?.ips ?? []) {
        if (!link.addresses.includes(ip.address)) throw new PluginError(999, `Expected IP ${ip.address.split('/')[0]} not found`);
      }
      return undefined;
    }
    const override = this.results[conf.name];
    const seq = this.seq++;
    const host = (seq % 250) + 2;
    const hex = host.toString(16);
    const vethName = `veth${hex.padStart(8, '0')}`;
    const podMac = `02:00:00:00:02:${hex.padStart(2, '0')}`;
    const ipam = (conf.ipam ?? {}) as Record<string, unknown>;
    const ips = override ? [] : this.allocate(conf.name, ipam, ownerKey);
    const routes = Array.isArray(ipam.routes) ? (ipam.routes as Array<{ dst: string; gw?: string }>) : [];
    let result: CniResult = {
      cniVersion: conf.cniVersion,
      interfaces: [
        { name: bridgeName, mac: '02:00:00:00:00:01' },
        { name: vethName, mac: `02:00:00:00:01:${hex.padStart(2, '0')}` },
        { name: e.ifName, mac: podMac, sandbox: e.netns },
      ],
      ips: ips.map((ip) => ({ address: ip.address, ...(ip.gateway ? { gateway: ip.gateway } : {}), interface: 2 })),
      routes,
      dns: (conf.dns as CniResult['dns']) ?? {},
    };
    if (override) result = override(e.containerId, e.netns);
    const pod = result.interfaces?.find((i) => i.sandbox);
    const podIndex = result.interfaces?.indexOf(pod!) ?? -1;
    const podAddresses = (result.ips ?? []).filter((ip) => ip.interface === podIndex).map((ip) => ip.address);
    const gateways = (result.ips ?? []).flatMap((ip) => (ip.gateway ? [ip.gateway] : []));
    this.kernel.addPodLink(e.netns, {
      name: e.ifName,
      mac: pod?.mac ?? podMac,
      kind: 'veth',
      addresses: podAddresses,
      routes: (result.routes ?? []).map((r) => ({
        dst: r.dst,
        gw: r.gw ?? (result.ips ?? []).find((ip) => ip.address.includes(':') === r.dst.includes(':'))?.gateway,
      })),
      peer: vethName,
      owner,
    });
    const bridge = this.kernel.host.get(bridgeName) ?? {
      name: bridgeName,
      mac: '02:00:00:00:00:01',
      kind: 'bridge' as const,
      addresses: [],
    };
    if (conf.isGateway === true)
      for (const g of gateways) if (!bridge.addresses.some((a) => a.startsWith(`${g}/`))) bridge.addresses.push(`${g}/32`);
    this.kernel.host.set(bridgeName, bridge);
    this.kernel.host.set(vethName, {
      name: vethName,
      mac: `02:00:00:00:01:${hex.padStart(2, '0')}`,
      kind: 'veth',
      addresses: [],
      master: bridgeName,
      owner,
    });
    return versioned(conf.cniVersion, result);
  }

  private portmap(e: Env, conf: Conf): CniResult | undefined {
    const chain = `CNI-DN-${createHash('sha512').update(`${conf.name}${e.containerId}`).digest('hex').slice(0, 17)}`;
    if (e.command === 'DEL') {
      this.kernel.flushChain(chain);
      return undefined;
    }
    if (!conf.prevResult) throw new PluginError(7, 'must be called as chained plugin');
    if (e.command === 'CHECK') return undefined;
    const mappings = ((conf.runtimeConfig as { portMappings?: unknown[] } | undefined)?.portMappings ?? []) as Array<{
      hostPort: number;
      containerPort: number;
      protocol: string;
      hostIP?: string;
    }>;
    // portmap parses hostIP with Go's net.ParseIP (no zone) only now, after the bridge has allocated the pod's IP
    const bad = mappings.find((m) => m.hostIP !== undefined && (isIP(m.hostIP) === 0 || m.hostIP.includes('%')));
    if (bad) throw new PluginError(999, `invalid host IP "${bad.hostIP}"`);
    const ips = conf.prevResult.ips ?? [];
    for (const family of [4, 6] as const) {
      const podIp = ips.map((ip) => ip.address.split('/')[0]!).find((ip) => ip.includes(':') === (family === 6));
      const own = mappings.filter((m) => !m.hostIP || m.hostIP.includes(':') === (family === 6));
      if (!podIp || own.length === 0) continue;
      const lines = family === 4 ? this.kernel.nat.v4 : this.kernel.nat.v6;
      for (const proto of [...new Set(own.map((m) => m.protocol))]) {
        const ports = own
          .filter((m) => m.protocol === proto)
          .map((m) => m.hostPort)
          .join(',');
        lines.push(
          `-A CNI-HOSTPORT-DNAT -p ${proto} -m comment --comment "dnat name: \\"${conf.name}\\" id: \\"${e.containerId}\\"" -m multiport --dports ${ports} -j ${chain}`,
        );
      }
      for (const m of own) {
        const dest = family === 6 ? `[${podIp}]:${m.containerPort}` : `${podIp}:${m.containerPort}`;
        const d = m.hostIP ? `-d ${m.hostIP}/${family === 6 ? 128 : 32} ` : '';
        lines.push(`-A ${chain} ${d}-p ${m.protocol} -m ${m.protocol} --dport ${m.hostPort} -j DNAT --to-destination ${dest}`);
      }
    }
    return conf.prevResult;
  }

  private bandwidth(e: Env, conf: Conf, owner: KernelOwner): CniResult | undefined {
    const ifb = `bwp${createHash('sha1').update(`${conf.name}${e.containerId}`).digest('hex').slice(0, 12)}`;
    if (e.command === 'DEL') {
      this.kernel.host.delete(ifb);
      return undefined;
    }
    if (!conf.prevResult) throw new PluginError(7, 'must be called as chained plugin');
    if (e.command === 'CHECK') return undefined;
    const bw = (conf.runtimeConfig as { bandwidth?: Record<string, number> } | undefined)?.bandwidth;
    // tc shows rates in bytes per second and bursts in bytes
    const tbf = (rate?: number, burst?: number) => (rate ? { rate: rate / 8, burst: Math.floor((burst ?? 0) / 8) } : undefined);
    const peer = this.kernel.podLinks(e.netns).find((l) => l.name === e.ifName)?.peer;
    const hostVeth = peer ? this.kernel.host.get(peer) : undefined;
    const ingress = tbf(bw?.ingressRate, bw?.ingressBurst);
    if (hostVeth && ingress) hostVeth.tbf = ingress;
    const egress = tbf(bw?.egressRate, bw?.egressBurst);
    if (!egress) return conf.prevResult;
    this.kernel.host.set(ifb, { name: ifb, mac: '02:00:00:00:03:01', kind: 'ifb', addresses: [], tbf: egress, owner });
    return { ...conf.prevResult, interfaces: [...(conf.prevResult.interfaces ?? []), { name: ifb, mac: '02:00:00:00:03:01' }] };
  }

  /** host-local: one address per range set, from the first range with room, continuing after the last one handed out. */
  private allocate(network: string, ipam: Record<string, unknown>, ownerKey: string): Array<{ address: string; gateway?: string }> {
    const rangeSets: IpRange[][] = Array.isArray(ipam.ranges)
      ? (ipam.ranges as IpRange[][])
      : typeof ipam.subnet === 'string'
        ? [[ipam as unknown as IpRange]]
        : [];
    if (rangeSets.length === 0) throw new PluginError(7, 'no IP ranges specified');
    return rangeSets.map((set, i) => {
      const store = this.ipam.get(`${network}/${i}`) ?? { allocated: new Map<string, string>() };
      this.ipam.set(`${network}/${i}`, store);
      for (const [ip, who] of store.allocated)
        if (who === ownerKey)
          throw new PluginError(
            999,
            `failed to allocate for range ${i}: ${ip} has been allocated to ${ownerKey}, duplicate allocation is not allowed`,
          );
      for (const range of set) {
        const r = parseRange(range);
        const size = r.end - r.start + 1n;
        const from = store.last !== undefined && store.last >= r.start && store.last < r.end ? store.last + 1n : r.start;
        for (let k = 0n; k < size; k++) {
          const n = r.start + ((from - r.start + k) % size);
          const ip = formatIp(n, r.v6);
          if (n === r.gateway || store.allocated.has(ip)) continue;
          store.allocated.set(ip, ownerKey);
          store.last = n;
          return { address: `${ip}/${r.prefix}`, gateway: formatIp(r.gateway, r.v6) };
        }
      }
      throw new PluginError(999, `failed to allocate for range ${i}: no IP addresses available in range set`);
    });
  }

  private release(network: string, ownerKey: string): void {
    for (const [key, store] of this.ipam) {
      if (!key.startsWith(`${network}/`)) continue;
      for (const [ip, who] of store.allocated) if (who === ownerKey) store.allocated.delete(ip);
    }
  }

  /** The plugin's position in its list: the plugin object whose every key the stdin carries unchanged. */
  private indexOf(network: string, conf: Conf): number {
    const net = this.networks.find((n) => n.name === network);
    if (!net) return network === 'cni-loopback' ? 0 : -1;
    return net.plugins.findIndex((p) => Object.entries(p).every(([k, v]) => isDeepStrictEqual(conf[k], v)));
  }

  private takeFault(verb: string, network: string, index: number): PluginFault | undefined {
    const i = this.faults.findIndex((f) => f.verb === verb && f.network === network && f.index === index);
    if (i < 0) return undefined;
    const f = this.faults[i]!;
    if (f.once) this.faults.splice(i, 1);
    return f;
  }
}

/** A plugin that never answers: the exec ends when its timeout fires or its caller cancels, with the child killed. */
function hang(req: ExecRequest, result: (r: Partial<ExecResult>) => ExecResult): Promise<ExecResult> {
  return new Promise((resolve) => {
    const done = (why: 'timedOut' | 'canceled') => {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      resolve(result({ exitCode: null, signal: 'SIGKILL', [why]: true }));
    };
    const onAbort = () => done('canceled');
    const timer = setTimeout(() => done('timedOut'), req.timeoutMs);
    req.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Results before spec 1.0.0 carry `version` on each IP. */
function versioned(cniVersion: string, r: CniResult): CniResult {
  if (specAtLeast(cniVersion, '1.0.0')) return r;
  return { ...r, ips: (r.ips ?? []).map((ip) => ({ ...ip, version: ip.address.includes(':') ? '6' : '4' })) } as CniResult;
}

function parseIp(text: string): { n: bigint; v6: boolean } {
  if (!text.includes(':')) return { n: text.split('.').reduce((acc, o) => (acc << 8n) | BigInt(Number(o)), 0n), v6: false };
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return { n: groups.reduce((acc, g) => (acc << 16n) | BigInt(Number.parseInt(g || '0', 16)), 0n), v6: true };
}

function formatIp(n: bigint, v6: boolean): string {
  if (!v6) return [24n, 16n, 8n, 0n].map((s) => ((n >> s) & 255n).toString()).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((n >> BigInt((7 - i) * 16)) & 0xffffn).toString(16));
  // compress the longest run of zero groups, as Go and the kernel print it
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  if (best.at < 0) return groups.join(':');
  return `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.len).join(':')}`;
}

function parseRange(r: IpRange): { start: bigint; end: bigint; gateway: bigint; prefix: number; v6: boolean } {
  const [base, p] = r.subnet.split('/') as [string, string];
  const { n, v6 } = parseIp(base);
  const bits = v6 ? 128n : 32n;
  const prefix = Number(p);
  const hostBits = bits - BigInt(prefix);
  const network = (n >> hostBits) << hostBits;
  const last = network + (1n << hostBits) - 1n;
  const gateway = r.gateway ? parseIp(r.gateway).n : network + 1n;
  const start = r.rangeStart ? parseIp(r.rangeStart).n : network + 1n;
  const end = r.rangeEnd ? parseIp(r.rangeEnd).n : v6 ? last : last - 1n;
  return { start, end, gateway, prefix, v6 };
}
