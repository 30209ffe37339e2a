/**
 * The measuring verbs on the pods of another CRI runtime (containerd, CRI-O): the same probe, trace, topology, live
 * view and throughput features the engine runs on its own pods, each given a PodLookup of the endpoint's pods
 * resolved from the node (foreign/). The endpoint only describes its pods (list and verbose status over CRI); every
 * measurement is made here, by this process, in the pod's netns.
 *
 * Read-only by contract: nothing here runs a CNI ADD or DEL, writes under the runtime's directories or libcni's
 * cache, or keeps anything after a verb returns — the probe's responders, the trace's rules, tracefs instances and
 * captures, the throughput meter's processes are the features' own and each removes what it made (the same code
 * paths as for Podscope's pods). Each verb takes a fresh snapshot, so a pod made or removed since is seen.
 */
import type { CniConfigView } from '../../../shared/domain/cni';
import { PodscopeError } from '../../../shared/domain/errors';
import type { LiveNetworkView } from '../../../shared/domain/live';
import type { LabRecordedAdd } from '../../../shared/domain/lab';
import type { CniCheckReport, CniStatusReport, ThroughputOptions, ThroughputReport } from '../../../shared/domain/measure';
import type { ProbeReport } from '../../../shared/domain/probe';
import type { MeasurementApi, SandboxEvent } from '../../../shared/domain/sandbox';
import type { NetworkTopology, PodTopology } from '../../../shared/domain/topology';
import type { ForeignNode, NodeFiles } from '../foreign/deps';
import { ForeignPods } from '../foreign/lookup';
import { foreignCniCheck, foreignCniStatus } from '../foreign/cni-verbs';
import { foreignRecordedAdd } from '../foreign/recorded-add';
import type { ExecContext } from '../cni/plugin-exec';
import type { CniCallRecord } from '../cni/types';
import type { ProcessRunner } from '../os/exec';
import { foreignResolvConf, type ForeignSandbox } from '../foreign/resolve';
import type { LiveReader } from '../netns/live-reader';
import type { ProbeNet } from '../netns/probe-net';
import { buildLiveView } from '../pods/live';
import { probeSandbox } from '../probe/probe';
import type { ThroughputMeter } from '../throughput/types';
import { networkTopology, podTopology } from '../topology/read';
import type { TopologyReader } from '../topology/reader';
import type { FlowTracer } from '../trace/flow-tracer';
import { readyPod } from '../common/pod-facts';
import { PortGate } from './port-gate';
import { probeTracer } from './probe-tracer';
import { ThroughputRuns } from './throughput-runs';
import { closeController } from '../common/close-signal';

/** What a CRI endpoint supplies: descriptions of its pods, never an action on them. */
export interface ForeignSource {
  /** a verbose PodSandboxStatus of each pod (these ids, or every one the endpoint lists) */
  sandboxes(ids?: string[]): Promise<ForeignSandbox[]>;
  /** the runtime's loaded CNI networks, as its Status reports them (absent or failing: the cache's conflists alone) */
  cniConfig?(): Promise<CniConfigView>;
  /** a name for errors ("containerd at unix:///run/containerd/containerd.sock") */
  describe: string;
}

export interface ForeignMeasurerDeps {
  files: NodeFiles;
  /** libcni's cache dir of the endpoint's runtime (results under <dir>/results) */
  cniCacheDir: string;
  liveReader: LiveReader;
  probeNet?: ProbeNet;
  flowTracer?: FlowTracer;
  throughputMeter?: ThroughputMeter;
  topologyReader?: TopologyReader;
  /** CHECK and STATUS: how plugins are run, and where they are when the runtime does not say */
  cniPlugins?: { runner: ProcessRunner; binDirs: string[]; timeoutMs: number };
  /**
   * the runtime's node when it lives in namespaces of its own (a kind node): its pods are resolved through its root
   * and pid numbering, and the readers and probe net given here already do their host-side work in its netns
   */
  node?: ForeignNode;
}

/** The verbs the CLI's `--endpoint` and the app's endpoint tabs run on a foreign pod. */
export type ForeignMeasurements = MeasurementApi & {
  /** the endpoint's pods, resolved now (the paths across nodes plan from them) */
  pods(): Promise<ForeignPods>;
  probe(id: string, opts?: { trace?: boolean; dnsName?: string; mtu?: boolean }): Promise<ProbeReport>;
  lastProbe(id: string): Promise<ProbeReport | null>;
  live(id: string): Promise<LiveNetworkView>;
  /** the pod's ADD as libcni's cache keeps it, for the lab to diff a run against (read-only) */
  recordedAdd(id: string): Promise<LabRecordedAdd>;
  subscribe(listener: (e: SandboxEvent) => void): () => void;
  close(): void;
};

const EMPTY_CNI: CniConfigView = { confDir: '', binDirs: [], maxConfNum: 0, networks: [], errors: [], ready: true, loadedAt: '' };

export function createForeignMeasurer(deps: ForeignMeasurerDeps, source: ForeignSource): ForeignMeasurements {
  const listeners = new Set<(e: SandboxEvent) => void>();
  const emit = (e: SandboxEvent) => {
    for (const l of listeners) {
      try {
        l(e);
      } catch {
        // a broken subscriber must not break a measurement
      }
    }
  };
  const abort = closeController();
  const gate = new PortGate();
  const lastProbes = new Map<string, ProbeReport>();
  const measuring = new Set<string>();
  const netnsClosed = async (path: string) => !(await deps.files.exists(path));

  /** every pod of the endpoint, resolved now (a pod the resolver could not read is found but throws its reason) */
  const snapshot = async () =>
    ForeignPods.resolve(deps.files, await source.sandboxes(), { cniCacheDir: deps.cniCacheDir, ...(deps.node && { node: deps.node }) });
  const probeNode = deps.node?.netnsPath !== undefined ? { name: deps.node.name, netnsPath: deps.node.netnsPath } : undefined;
  const cniConfig = async () => (source.cniConfig ? await source.cniConfig().catch(() => EMPTY_CNI) : EMPTY_CNI);

  /** plugin execs from the runtime's own bin dirs (its Status says them), else this engine's */
  const cniExec = async () => {
    const plugins = deps.cniPlugins;
    if (!plugins) throw new PodscopeError('FailedPrecondition', 'this process cannot run CNI plugins');
    const reported = (await cniConfig()).binDirs;
    const binDirs = reported.length ? reported : plugins.binDirs;
    return (record: (r: CniCallRecord) => void): ExecContext => ({
      runner: plugins.runner,
      binDirs,
      baseEnv: process.env,
      timeoutMs: plugins.timeoutMs,
      signal: abort.signal,
      record,
    });
  };

  const throughputRuns = (pods: ForeignPods) =>
    new ThroughputRuns(
      deps.throughputMeter && {
        pods,
        meter: deps.throughputMeter,
        netnsClosed,
        liveView: async (pod, hostDevices, signal) =>
          buildLiveView(pod, await deps.liveReader.read(pod.netnsPath, hostDevices, signal), new Date()),
      },
      emit,
    );

  return {
    pods: snapshot,

    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async probe(id, opts = {}) {
      const net = deps.probeNet;
      if (!net) throw new PodscopeError('FailedPrecondition', 'this process has no reachability probe');
      const [pods, cni] = await Promise.all([snapshot(), cniConfig()]);
      const tracer = opts.trace && deps.flowTracer ? probeTracer(deps.flowTracer) : undefined;
      return gate.withExclusive(async () => {
        if (abort.signal.aborted) throw new PodscopeError('Canceled', 'closing');
        const report = await probeSandbox(
          {
            pods,
            net,
            // the snapshot was just read from the runtime: its state is as fresh as a pause poll would make it
            refreshLiveness: async () => undefined,
            netnsClosed,
            cniConfig: () => cni,
            // a pod without dns_config: its nameservers are what its resolv.conf says, read through the pause's root
            resolvConf: async (pod) => foreignResolvConf(deps.files, pods.get(pod.id)),
            ...(tracer && { tracer }),
            ...(probeNode && { node: probeNode }),
          },
          id,
          {
            trigger: 'onDemand',
            signal: abort.signal,
            trace: opts.trace === true,
            ...(opts.dnsName ? { dnsName: opts.dnsName } : {}),
            ...(opts.mtu === false ? { mtu: false } : {}),
          },
        );
        lastProbes.set(report.sandboxId, report);
        return report;
      });
    },

    async lastProbe(id) {
      // no snapshot: the app asks this for every row it shows, and a snapshot reads every pod's verbose status. A pod
      // never probed here has no report (foreign pods get no probe on ready), whatever its id.
      const hit = lastProbes.get(id);
      if (hit) return hit;
      const byPrefix = [...lastProbes.keys()].filter((k) => k.startsWith(id));
      return byPrefix.length === 1 ? lastProbes.get(byPrefix[0]!)! : null;
    },

    async live(id) {
      const pods = await snapshot();
      const pod = readyPod(pods, id, 'look into');
      if (await netnsClosed(pod.netnsPath))
        throw new PodscopeError('FailedPrecondition', `sandbox ${pod.id} is stopped: its network namespace ${pod.netnsPath} is gone`);
      const hostDevices = [
        ...new Set((pod.network?.networks ?? []).flatMap((n) => (n.result?.interfaces ?? []).filter((i) => !i.sandbox).map((i) => i.name))),
      ];
      return buildLiveView(pod, await deps.liveReader.read(pod.netnsPath, hostDevices), new Date());
    },

    async throughput(id: string, opts: ThroughputOptions = {}): Promise<ThroughputReport> {
      const pods = await snapshot();
      // one transfer per pod at a time: two through one veth would halve each other
      const key = pods.resolve(id) ?? id;
      if (measuring.has(key))
        throw new PodscopeError('FailedPrecondition', `a throughput measurement of sandbox ${key} is already running`);
      measuring.add(key);
      try {
        return await throughputRuns(pods).run(id, opts, abort.signal);
      } finally {
        measuring.delete(key);
      }
    },

    async topology(id: string): Promise<PodTopology> {
      return podTopology({ pods: await snapshot(), reader: deps.topologyReader }, id);
    },

    async networkTopology(network: string): Promise<NetworkTopology> {
      return networkTopology({ pods: await snapshot(), reader: deps.topologyReader }, network);
    },

    async cniCheck(id: string): Promise<CniCheckReport> {
      const pluginExec = await cniExec();
      return foreignCniCheck(deps.files, await snapshot(), id, pluginExec);
    },

    async recordedAdd(id: string): Promise<LabRecordedAdd> {
      return foreignRecordedAdd(deps.files, await snapshot(), id);
    },

    async cniStatus(): Promise<CniStatusReport> {
      const pluginExec = await cniExec();
      return foreignCniStatus(deps.files, await snapshot(), pluginExec);
    },

    close() {
      abort.abort();
      listeners.clear();
    },
  };
}
