/**
 * An in-memory Engine for CRI tests: the SandboxApi contract with containerd's semantics where the CRI layer can
 * observe them (name reservation, unknown ids on stop/remove, state changes, events) and a plausible status with
 * two IPs on eth0, port mappings, bandwidth and a one-entry plugin trace. No host resources are touched.
 * Like the real engine, status/stop/remove accept a unique id prefix (the CRI server passes ids through).
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_ENGINE_OPTIONS, type Engine, type EngineOptions, type SandboxEventListener } from '../../../electron/engine/options';
import { PodSandboxConfigSchema, formatIssues, isHostNetwork, type IpPreference } from '../../../shared/domain/config';
import { PodscopeError, invalidArgument, notFound } from '../../../shared/domain/errors';
import { analyzeBandwidth } from '../../../shared/domain/bandwidth';
import { selectForEveryPreference, selectPodIPs } from '../../../shared/domain/ip-selection';
import { analyzePortMappings } from '../../../shared/domain/portmap';
import type { CniConfigView } from '../../../shared/domain/cni';
import { resolveIdPrefix } from '../../../electron/engine/sandbox/id-index';
import type { RunSandboxRequest, RuntimeCondition, SandboxFilter, SandboxStatus, SandboxSummary } from '../../../shared/domain/sandbox';
import { toCriState } from '../../../shared/domain/sandbox';

export interface FakeEngine extends Engine {
  /** the next engine call of this verb throws this error */
  failNext(verb: 'run' | 'stop' | 'remove' | 'status' | 'list', error: Error): void;
  conditions: RuntimeCondition[];
  emitted: number;
}

const summaryOf = (s: SandboxStatus): SandboxSummary => {
  const { id, name, metadata, state, internalState, createdAt, createdAtNs, labels, annotations, runtimeHandler, hostNetwork, ip, additionalIps, hostPorts, bandwidth } = s;
  return structuredClone({ id, name, metadata, state, internalState, createdAt, createdAtNs, labels, annotations, runtimeHandler, hostNetwork, ip, additionalIps, hostPorts, bandwidth });
};

export function createFakeEngine(opts: { ipPreference?: IpPreference } = {}): FakeEngine {
  const options: EngineOptions = { ...DEFAULT_ENGINE_OPTIONS, ipPreference: opts.ipPreference ?? 'ipv4' };
  const sandboxes = new Map<string, SandboxStatus>();
  const names = new Map<string, string>();
  const listeners = new Set<SandboxEventListener>();
  const failures = new Map<string, Error>();
  let seq = 0;
  const maybeFail = (verb: string) => {
    const e = failures.get(verb);
    if (e) { failures.delete(verb); throw e; }
  };
  const emit: SandboxEventListener = (e) => { engine.emitted++; for (const l of listeners) l(e); };
  const resolve = (idOrPrefix: string) => resolveIdPrefix(sandboxes.keys(), idOrPrefix) ?? idOrPrefix;
  const lookup = (idOrPrefix: string) => {
    const s = sandboxes.get(resolve(idOrPrefix));
    if (!s) throw notFound(`an error occurred when try to find sandbox "${idOrPrefix}": not found`);
    return s;
  };
  const cniConfig: CniConfigView = {
    confDir: '/fake/net.d', binDirs: ['/fake/bin'], maxConfNum: 1, networks: [], errors: [], ready: true, loadedAt: new Date().toISOString(),
  };

  const engine: FakeEngine = {
    options,
    emitted: 0,
    conditions: [
      { type: 'RuntimeReady', status: true, reason: '', message: '' },
      { type: 'NetworkReady', status: true, reason: '', message: '' },
    ],
    failNext(verb, error) { failures.set(verb, error); },
    async run(req: RunSandboxRequest) {
      maybeFail('run');
      const parsed = PodSandboxConfigSchema.safeParse(req.config);
      if (!parsed.success) throw invalidArgument(`invalid sandbox config: ${formatIssues(parsed.error).join('; ')}`);
      const config = parsed.data;
      const bw = analyzeBandwidth(config.annotations);
      if (bw.error) throw new PodscopeError('CniError', `failed to setup network for sandbox: get cni namespace options: reading pod bandwidth annotations: ${bw.error}`);
      const m = config.metadata;
      const name = `${m.name}_${m.namespace}_${m.uid}_${m.attempt}`;
      const id = randomBytes(32).toString('hex');
      const other = names.get(name);
      if (other) throw new PodscopeError('AlreadyExists', `failed to reserve sandbox name "${name}": name "${name}" is reserved for "${other}"`);
      names.set(name, id);
      seq++;
      const hostNetwork = isHostNetwork(config);
      const eth0Ips = hostNetwork ? [] : [`10.0.0.${seq + 1}`, `fd00::${(seq + 1).toString(16)}`];
      const pref = req.ipPreference ?? options.ipPreference;
      const sel = selectPodIPs(eth0Ips, pref);
      const now = new Date();
      const ports = analyzePortMappings(config.port_mappings);
      const netnsPath = hostNetwork ? undefined : `/var/run/netns/cni-fake-${seq}`;
      const status: SandboxStatus = {
        id, name, metadata: m, state: 'SANDBOX_NOTREADY', internalState: 'Unknown', createdAt: now.toISOString(),
        createdAtNs: (BigInt(now.getTime()) * 1_000_000n + 123n).toString(),
        labels: config.labels, annotations: config.annotations, runtimeHandler: req.runtimeHandler ?? '', hostNetwork,
        ip: sel.primary, additionalIps: sel.additional, hostPorts: ports.flatMap((p) => (p.cni ? [p.cni] : [])),
        bandwidth: { ingress: bw.ingress?.raw, egress: bw.egress?.raw },
        config, ipPreference: pref, netnsPath, netnsClosed: hostNetwork, pause: { containerId: id, pid: 4000 + seq, status: 'running' },
        ipSelection: hostNetwork ? undefined : { ...sel, eth0Ips, alternatives: selectForEveryPreference(eth0Ips) },
        portMappings: ports, bandwidthAnalysis: bw, networks: [],
        interfaces: hostNetwork ? {} : {
          eth0: { mac: '02:00:00:00:00:01', sandbox: netnsPath, ipConfigs: eth0Ips.map((ip) => ({ ip, gateway: ip.includes(':') ? 'fd00::1' : '10.0.0.1' })) },
          lo: { mac: '00:00:00:00:00:00', sandbox: netnsPath, ipConfigs: [{ ip: '127.0.0.1' }, { ip: '::1' }] },
        },
        routes: hostNetwork ? [] : [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }], dns: [{}, {}],
        ociSpec: { ociVersion: '1.0.2', process: { args: ['/pause'] } },
        trace: [{
          seq: 1, phase: 'run', step: 'cni.plugin', label: 'ADD bridge (fake/eth0)', startedAt: now.toISOString(), durationMs: 1, ok: true,
          plugin: { network: 'fake', ifName: 'eth0', type: 'bridge', verb: 'ADD', index: 0, env: { CNI_COMMAND: 'ADD' }, stdin: '{}', stdout: '{}', stderr: '', exitCode: 0 },
        }],
      };
      sandboxes.set(id, status);
      emit({ type: 'sandbox.added', id, summary: summaryOf(status) });
      status.internalState = 'Ready';
      status.state = toCriState('Ready');
      emit({ type: 'sandbox.changed', id, summary: summaryOf(status) });
      return { id };
    },
    async stop(idOrPrefix) {
      maybeFail('stop');
      const id = resolve(idOrPrefix);
      const s = sandboxes.get(id);
      if (!s) return;
      s.internalState = 'NotReady';
      s.state = 'SANDBOX_NOTREADY';
      s.netnsClosed = true;
      s.pause.status = 'stopped';
      s.stoppedAt ??= new Date().toISOString();
      emit({ type: 'sandbox.changed', id, summary: summaryOf(s) });
    },
    async remove(idOrPrefix) {
      maybeFail('remove');
      const id = resolve(idOrPrefix);
      const s = sandboxes.get(id);
      if (!s) return;
      if (s.state === 'SANDBOX_READY') await engine.stop(id);
      sandboxes.delete(id);
      names.delete(s.name);
      emit({ type: 'sandbox.removed', id });
    },
    async status(id) {
      maybeFail('status');
      return structuredClone(lookup(id));
    },
    async list(filter?: SandboxFilter) {
      maybeFail('list');
      return [...sandboxes.values()]
        .filter((s) => !filter?.id || s.id.startsWith(filter.id))
        .filter((s) => !filter?.state || s.state === filter.state)
        .filter((s) => Object.entries(filter?.labelSelector ?? {}).every(([k, v]) => s.labels[k] === v))
        .map(summaryOf);
    },
    async cniConfig() { return cniConfig; },
    async preview() { throw new PodscopeError('Unimplemented', 'fake engine has no preview'); },
    async runtimeConditions() { return structuredClone(engine.conditions); },
    async live() {
      throw new PodscopeError('Unimplemented', 'the fake engine has no kernel to look at');
    },
    async info() {
      return {
        version: '0.1.0-fake', pid: process.pid, uid: 0, stateDir: '/fake/state', runDir: '/fake/run', netnsDir: '/fake/netns', cniConfDir: '/fake/net.d',
        cniBinDirs: ['/fake/bin'], cniCacheDir: '/fake/cache', ipPreference: options.ipPreference, problems: [],
      };
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() { listeners.clear(); },
  };
  return engine;
}
