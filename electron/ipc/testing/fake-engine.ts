/**
 * An in-memory Engine for unit tests and UI work without root. It follows the shared rules (schema, bandwidth,
 * port mappings, IP selection) so what it reports has the same shape and the same validation as the real engine,
 * but it touches nothing on the host: IPs come from a counter and the "trace" is synthesised.
 */
import { randomBytes } from 'node:crypto';
import { PodSandboxConfigSchema, formatIssues, isHostNetwork, protocolName, type IpPreference } from '../../../shared/domain/config';
import { analyzeBandwidth } from '../../../shared/domain/bandwidth';
import { analyzePortMappings, toCniPortMappings } from '../../../shared/domain/portmap';
import { selectForEveryPreference, selectPodIPs } from '../../../shared/domain/ip-selection';
import { PodscopeError, invalidArgument, notFound } from '../../../shared/domain/errors';
import type { CniConfigView } from '../../../shared/domain/cni';
import type { LiveBandwidthCheck, LiveNetworkView, LivePortCheck } from '../../../shared/domain/live';
import type {
  ConfigPreview,
  EngineInfo,
  RunSandboxRequest,
  SandboxEvent,
  SandboxStatus,
  SandboxSummary,
  TraceEntry,
} from '../../../shared/domain/sandbox';
import { DEFAULT_ENGINE_OPTIONS, type Engine, type EngineOptions, type SandboxEventListener } from '../../engine/options';

const PLUGINS = [
  { type: 'bridge', capabilities: [] as string[] },
  { type: 'portmap', capabilities: ['portMappings'] },
  { type: 'bandwidth', capabilities: ['bandwidth'] },
];

export interface FakeEngine extends Engine {
  /** every event emitted, for assertions */
  readonly events: SandboxEvent[];
  /**
   * Rewrites what live() reports for one sandbox (a tbf the plugin never set, a DNAT rule someone flushed), so
   * tests can show mismatches the fake's kernel would otherwise never have.
   */
  tamperLive(id: string, edit: (view: LiveNetworkView) => LiveNetworkView): void;
}

export function createFakeEngine(overrides: Partial<EngineOptions> = {}): FakeEngine {
  const options: EngineOptions = { ...DEFAULT_ENGINE_OPTIONS, cniConfDir: '/tmp/fake/net.d', ...overrides };
  const listeners = new Set<SandboxEventListener>();
  const sandboxes = new Map<string, SandboxStatus>();
  const liveEdits = new Map<string, (view: LiveNetworkView) => LiveNetworkView>();
  const events: SandboxEvent[] = [];
  let nextHost = 2;
  let seq = 0;
  const emit = (e: SandboxEvent) => {
    events.push(e);
    for (const l of listeners) l(e);
  };
  const summary = (s: SandboxStatus): SandboxSummary => {
    const { config: _c, ipPreference: _p, netnsPath: _n, netnsClosed: _nc, pause: _pa, ipSelection: _i, portMappings: _pm, bandwidthAnalysis: _b, networks: _nw, interfaces: _if, routes: _r, dns: _d, ociSpec: _o, trace: _t, lastError: _l, stoppedAt: _s, ...rest } = s;
    return rest;
  };
  const get = (id: string) => {
    const s = sandboxes.get(id) ?? [...sandboxes.values()].find((x) => x.id.startsWith(id));
    if (!s) throw notFound(`sandbox ${JSON.stringify(id)} not found`);
    return s;
  };
  const entry = (phase: TraceEntry['phase'], step: string, label: string, extra: Partial<TraceEntry> = {}): TraceEntry => ({
    seq: ++seq, phase, step, label, startedAt: new Date().toISOString(), durationMs: 1 + (seq % 7) * 3.3, ok: true, ...extra,
  });

  const cniConfig = (): CniConfigView => ({
    confDir: options.cniConfDir,
    binDirs: options.cniBinDirs,
    maxConfNum: options.maxConfNum,
    networks: [
      { name: 'cni-loopback', cniVersion: '1.0.0', ifName: 'lo', builtin: true, disableCheck: false, plugins: [{ type: 'loopback', capabilities: [], raw: { type: 'loopback' }, binary: '/usr/lib/cni/loopback' }] },
      {
        name: 'fake-net', cniVersion: '1.0.0', ifName: 'eth0', source: `${options.cniConfDir}/10-fake.conflist`, builtin: false, disableCheck: false,
        plugins: PLUGINS.map((p) => ({ type: p.type, capabilities: p.capabilities, raw: { type: p.type, capabilities: Object.fromEntries(p.capabilities.map((c) => [c, true])) }, binary: `/usr/lib/cni/${p.type}` })),
      },
    ],
    errors: [],
    ready: true,
    loadedAt: new Date().toISOString(),
  });

  function analyse(req: RunSandboxRequest) {
    const parsed = PodSandboxConfigSchema.safeParse(req.config);
    if (!parsed.success) throw invalidArgument(`invalid PodSandboxConfig: ${formatIssues(parsed.error).join('; ')}`);
    const config = parsed.data;
    const bandwidth = analyzeBandwidth(config.annotations);
    const portMappings = analyzePortMappings(config.port_mappings);
    const capabilities: Record<string, unknown> = {};
    const pm = toCniPortMappings(config.port_mappings);
    if (pm.length) capabilities.portMappings = pm;
    if (bandwidth.capability) capabilities.bandwidth = bandwidth.capability;
    return { config, bandwidth, portMappings, capabilities };
  }


  /** What a kernel would say about a sandbox the fake "created": the CNI result applied faithfully. */
  function liveView(s: SandboxStatus): LiveNetworkView {
    const short = s.id.slice(0, 8);
    const hostVeth = `veth${short}`;
    const ifb = `bwp${short}`;
    const eth0 = s.ipSelection?.eth0Ips ?? [];
    const a = s.bandwidthAnalysis;
    const rate = (v?: { bitsPerSecond?: string }) => (v?.bitsPerSecond !== undefined && !a.error ? Number(v.bitsPerSecond) : undefined);
    const ingress = rate(a.ingress);
    const egress = rate(a.egress);
    const qdiscs: LiveNetworkView['qdiscs'] = [
      ingress !== undefined
        ? { dev: hostVeth, role: 'host-veth', kind: 'tbf', rateBitsPerSecond: ingress, burstBytes: 536870911 }
        : { dev: hostVeth, role: 'host-veth', kind: 'noqueue' },
      ...(egress !== undefined ? [{ dev: ifb, role: 'ifb' as const, kind: 'tbf', rateBitsPerSecond: egress, burstBytes: 536870911 }] : []),
    ];
    const check = (direction: 'ingress' | 'egress', requested: number | undefined, dev: string): LiveBandwidthCheck => {
      if (requested === undefined) return { direction, matches: true, note: 'no annotation and no tbf: not shaped, as requested' };
      return { direction, requestedBitsPerSecond: requested, appliedBitsPerSecond: requested, device: dev, matches: true, note: `tbf on ${dev} shapes ${direction} at the requested rate` };
    };
    const chain = `CNI-DN-${short}${'0'.repeat(16)}`;
    const ports = s.portMappings.map((d): LivePortCheck => {
      const protocol = d.cni?.protocol ?? protocolName(d.mapping.protocol).toLowerCase();
      if (!d.cni) {
        return { index: d.index, protocol, hostPort: d.mapping.host_port, containerPort: d.mapping.container_port, found: false, note: 'dropped before CNI (host_port 0): no DNAT rule is expected' };
      }
      const rule = `-A ${chain} -p ${protocol} -m ${protocol} --dport ${d.cni.hostPort} -j DNAT --to-destination ${s.ip}:${d.cni.containerPort}`;
      return { index: d.index, protocol, hostPort: d.cni.hostPort, containerPort: d.cni.containerPort, rule, found: true, note: `DNAT in chain ${chain}` };
    });
    return {
      collectedAt: new Date().toISOString(),
      netnsPath: s.netnsPath!,
      interfaces: [
        { name: 'lo', ifindex: 1, mac: '00:00:00:00:00:00', mtu: 65536, state: 'UNKNOWN', kind: undefined, addresses: [
          { family: 4, address: '127.0.0.1', prefixLen: 8, scope: 'host' },
          { family: 6, address: '::1', prefixLen: 128, scope: 'host' },
        ] },
        { name: 'eth0', ifindex: 2, mac: s.interfaces.eth0?.mac, mtu: 1500, state: 'UP', kind: 'veth', addresses: [
          ...eth0.map((ip) => (ip.includes(':') ? { family: 6 as const, address: ip, prefixLen: 64, scope: 'global' } : { family: 4 as const, address: ip, prefixLen: 16, scope: 'global' })),
          { family: 6, address: 'fe80::858:aff:fe58:2', prefixLen: 64, scope: 'link' },
        ] },
      ],
      routes: [
        { family: 4, dst: 'default', gateway: '10.88.0.1', dev: 'eth0' },
        { family: 4, dst: '10.88.0.0/16', dev: 'eth0', protocol: 'kernel', scope: 'link' },
        { family: 6, dst: 'fd00:88::/64', dev: 'eth0', protocol: 'kernel', metric: 256 },
        { family: 6, dst: 'fe80::/64', dev: 'eth0', protocol: 'kernel', metric: 256 },
      ],
      qdiscs,
      bandwidth: [check('ingress', ingress, hostVeth), check('egress', egress, ifb)],
      ports,
      errors: [],
    };
  }

  const engine: FakeEngine = {
    options,
    events,
    tamperLive(id, edit) {
      liveEdits.set(get(id).id, edit);
    },
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    async close() {
      listeners.clear();
    },
    async run(req) {
      const { config, bandwidth, portMappings, capabilities } = analyse(req);
      if (bandwidth.error) throw invalidArgument(bandwidth.error, { annotation: bandwidth });
      const id = randomBytes(32).toString('hex');
      const host = nextHost++;
      const pref: IpPreference = req.ipPreference ?? options.ipPreference;
      const hostNetwork = isHostNetwork(config);
      const eth0 = hostNetwork ? [] : [`10.88.0.${host}`, `fd00:88::${host.toString(16)}`];
      const sel = selectPodIPs(eth0, pref);
      const now = new Date();
      const trace: TraceEntry[] = [];
      const step = (e: TraceEntry) => {
        trace.push(e);
        emit({ type: 'sandbox.progress', id, requestId: req.requestId, entry: e });
      };
      step(entry('run', 'netns.create', 'create network namespace', { detail: { path: `/var/run/netns/cni-${id.slice(0, 8)}` } }));
      if (!hostNetwork) {
        for (const [index, p] of [{ type: 'loopback', capabilities: [] as string[] }, ...PLUGINS].entries()) {
          const runtimeConfig = Object.fromEntries(p.capabilities.filter((c) => c in capabilities).map((c) => [c, capabilities[c]]));
          const stdin = JSON.stringify({ cniVersion: '1.0.0', name: index === 0 ? 'cni-loopback' : 'fake-net', type: p.type, ...(Object.keys(runtimeConfig).length ? { runtimeConfig } : {}) });
          step(entry('run', 'cni.plugin', `ADD ${p.type} (${index === 0 ? 'cni-loopback/lo' : 'fake-net/eth0'})`, {
            plugin: { network: index === 0 ? 'cni-loopback' : 'fake-net', ifName: index === 0 ? 'lo' : 'eth0', type: p.type, verb: 'ADD', index: index === 0 ? 0 : index - 1, env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: id }, stdin, stdout: '{"cniVersion":"1.0.0"}', stderr: '', exitCode: 0 },
          }));
        }
      }
      step(entry('run', 'runc.start', 'start pause container', { detail: { pid: 4000 + host } }));
      const status: SandboxStatus = {
        id, name: `${config.metadata.name}_${config.metadata.namespace}_${config.metadata.uid}_${config.metadata.attempt}`,
        metadata: config.metadata, state: 'SANDBOX_READY', internalState: 'Ready', createdAt: now.toISOString(),
        createdAtNs: `${BigInt(now.getTime()) * 1_000_000n}`, labels: config.labels, annotations: config.annotations,
        runtimeHandler: req.runtimeHandler ?? '', hostNetwork, ip: sel.primary, additionalIps: sel.additional,
        hostPorts: toCniPortMappings(config.port_mappings),
        bandwidth: { ingress: bandwidth.ingress?.human, egress: bandwidth.egress?.human },
        config, ipPreference: pref, netnsPath: hostNetwork ? undefined : `/var/run/netns/cni-${id.slice(0, 8)}`, netnsClosed: false,
        pause: { containerId: id, pid: 4000 + host, status: 'running' },
        ipSelection: hostNetwork ? undefined : { ...sel, eth0Ips: eth0, alternatives: selectForEveryPreference(eth0) },
        portMappings, bandwidthAnalysis: bandwidth, networks: [],
        interfaces: hostNetwork ? {} : { eth0: { mac: '0a:58:0a:58:00:02', sandbox: `/var/run/netns/cni-${id.slice(0, 8)}`, ipConfigs: eth0.map((ip) => ({ ip, gateway: ip.includes(':') ? 'fd00:88::1' : '10.88.0.1' })) } },
        routes: hostNetwork ? [] : [{ dst: '0.0.0.0/0', gw: '10.88.0.1' }], dns: [], trace,
      };
      sandboxes.set(id, status);
      emit({ type: 'sandbox.added', id, summary: summary(status) });
      return { id };
    },
    async stop(id) {
      const s = get(id);
      s.state = 'SANDBOX_NOTREADY';
      s.internalState = 'NotReady';
      s.ip = '';
      s.additionalIps = [];
      s.pause = { ...s.pause, status: 'stopped', pid: undefined };
      s.stoppedAt = new Date().toISOString();
      s.trace.push(entry('stop', 'runc.kill', 'stop pause container'));
      emit({ type: 'sandbox.changed', id: s.id, summary: summary(s) });
    },
    async remove(id) {
      const s = sandboxes.get(id) ?? [...sandboxes.values()].find((x) => x.id.startsWith(id));
      if (!s) return; // CRI: removing an unknown sandbox succeeds
      if (s.state === 'SANDBOX_READY') throw new PodscopeError('FailedPrecondition', 'sandbox is still running: stop it first');
      sandboxes.delete(s.id);
      liveEdits.delete(s.id);
      emit({ type: 'sandbox.removed', id: s.id });
    },
    async status(id) {
      return structuredClone(get(id));
    },
    async list(filter) {
      return [...sandboxes.values()]
        .filter((s) => !filter?.state || s.state === filter.state)
        .filter((s) => !filter?.id || s.id.startsWith(filter.id))
        .map(summary);
    },
    async cniConfig() {
      return cniConfig();
    },
    async preview(req): Promise<ConfigPreview> {
      const { config, bandwidth, portMappings, capabilities } = analyse(req);
      const hostNetwork = isHostNetwork(config);
      return {
        hostNetwork,
        portMappings,
        bandwidth,
        cniArgs: [['IgnoreUnknown', '1'], ['K8S_POD_NAMESPACE', config.metadata.namespace], ['K8S_POD_NAME', config.metadata.name]],
        errors: bandwidth.error ? [bandwidth.error] : [],
        plugins: hostNetwork ? [] : PLUGINS.map((p, index) => {
          const rc = Object.fromEntries(p.capabilities.filter((c) => c in capabilities).map((c) => [c, capabilities[c]]));
          return { network: 'fake-net', ifName: 'eth0', type: p.type, index, capabilities: p.capabilities, runtimeConfig: Object.keys(rc).length ? rc : undefined };
        }),
      };
    },
    async live(id) {
      const s = get(id);
      if (s.hostNetwork) throw new PodscopeError('FailedPrecondition', `sandbox ${s.id.slice(0, 13)} uses the host network: it has no network namespace of its own to look into`);
      if (s.state !== 'SANDBOX_READY' || !s.netnsPath) throw new PodscopeError('FailedPrecondition', `sandbox ${s.id.slice(0, 13)} is stopped: its network namespace was removed, so there is nothing live to read`);
      const view = liveView(s);
      return structuredClone(liveEdits.get(s.id)?.(view) ?? view);
    },
    async runtimeConditions() {
      return [
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        { type: 'NetworkReady', status: true, reason: '', message: '' },
      ];
    },
    async info(): Promise<EngineInfo> {
      return {
        version: '0.1.0-fake', pid: process.pid, uid: 0, stateDir: options.stateDir, runDir: options.runDir, netnsDir: options.netnsDir,
        cniConfDir: options.cniConfDir, cniBinDirs: options.cniBinDirs, cniCacheDir: options.cniCacheDir, ipPreference: options.ipPreference, maxConfNum: options.maxConfNum, pluginTimeoutMs: options.pluginTimeoutMs, problems: [],
      };
    },
  };
  return engine;
}
