/**
 * The app's measurements of a CRI runtime's pods: the router sends probe, trace, live view, topology, throughput and
 * CHECK/STATUS for an added endpoint to the measurer this process builds over that endpoint's pod descriptions (the
 * one the CLI's --endpoint uses), never to CRI; the endpoint's lifecycle verbs stay CRI calls; a throughput run's
 * progress reaches the window as that endpoint's event. The measurer is a recording stand-in here (the real one is
 * exercised against containerd in tests/real/foreign-containerd.test.ts and the e2e); the CRI runtime is the
 * synthetic one, a real gRPC server.
 */
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEndpointRegistry, type CriEndpointRegistry } from '../../electron/endpoints';
import { createUnavailableEngine, type ForeignMeasurements, type ForeignNode, type ForeignSource } from '../../electron/engine/api';
import type { NodeDiscovery, NodeView, ProbeMatrix } from '../../shared/domain/nodes';
import { createRouter, type Router } from '../../electron/ipc/router';
import type { PushedEvent } from '../../shared/ipc/events';
import type { SandboxEvent } from '../../shared/domain/sandbox';
import { startSyntheticCri, type SyntheticCri } from '../../testkit/synthetic-cri';
import { tempDir } from '../../testkit/temp-dir';
import { until } from '../../testkit/until';

/** what the stand-in measurer was asked, and the source it was built over */
interface Recorded {
  calls: Array<[string, ...unknown[]]>;
  sources: ForeignSource[];
  /** the libcni cache dir each measurer was built with */
  cacheDirs: Array<string | undefined>;
  /** where each measurer was told the runtime lives */
  nodes: Array<ForeignNode | undefined>;
  emit?: (e: SandboxEvent) => void;
  closed: number;
}

function recordingMeasurer(rec: Recorded) {
  return (source: ForeignSource, opts: { cniCacheDir?: string; node?: ForeignNode } = {}): ForeignMeasurements => {
    rec.sources.push(source);
    rec.cacheDirs.push(opts.cniCacheDir);
    rec.nodes.push(opts.node);
    const listeners = new Set<(e: SandboxEvent) => void>();
    rec.emit = (e) => listeners.forEach((l) => l(e));
    const said =
      (verb: string) =>
      async (...args: unknown[]) => {
        rec.calls.push([verb, ...args]);
        return { measuredBy: 'stand-in', verb } as never;
      };
    return {
      pods: said('pods'),
      probe: said('probe'),
      lastProbe: async (id) => {
        rec.calls.push(['lastProbe', id]);
        return null;
      },
      live: said('live'),
      throughput: said('throughput'),
      topology: said('topology'),
      networkTopology: said('networkTopology'),
      cniCheck: said('cniCheck'),
      cniStatus: said('cniStatus'),
      recordedAdd: said('recordedAdd'),
      subscribe(l) {
        listeners.add(l);
        return () => listeners.delete(l);
      },
      close() {
        rec.closed++;
      },
    };
  };
}

const NO_NODES: NodeDiscovery = { nodes: [], refused: [] };

/** a discovered kind-shaped node: its own net and mount namespaces (runtime pid 4242), the host's pid numbering */
function kindNodeView(endpoint: string): NodeView {
  const ns = (id: string, host: boolean) => ({ id, host });
  return {
    name: 'kind-worker',
    nameFrom: 'uts-hostname',
    endpoint,
    socketPath: '/run/containerd/containerd.sock',
    foundBy: 'process',
    runtimeName: 'containerd',
    runtimeVersion: '1.6.20',
    runtimeApiVersion: 'v1',
    pid: 4242,
    namespaces: { net: ns('net:[2]', false), mnt: ns('mnt:[3]', false), pid: ns('pid:[1]', true), uts: ns('uts:[4]', false) },
    addresses: [{ ifName: 'eth0', cidr: '172.18.0.3/16' }],
    podSubnets: [{ cidr: '10.244.1.0/24', source: 'route', from: 'cni0' }],
    routes: [],
    problems: [],
  };
}

const sender = { transport: 'memory' as const, url: 'test://' };

let dir: ReturnType<typeof tempDir>;
let synth: SyntheticCri;
let endpoints: CriEndpointRegistry;
let router: Router;
let rec: Recorded;

beforeEach(async () => {
  dir = tempDir('podscope-endpoint-measure-');
  synth = await startSyntheticCri({ socketPath: join(dir.dir, 'cri.sock'), pods: 3, events: false });
  rec = { calls: [], sources: [], cacheDirs: [], nodes: [], closed: 0 };
  const engine = createUnavailableEngine(new Error('not needed: the measurer is given'));
  // discovery finds no node here (a unit test never reads this machine's /proc): the runtime is measured unplaced
  endpoints = createEndpointRegistry({ local: engine, foreignMeasurer: recordingMeasurer(rec), discoverNodes: async () => NO_NODES });
  router = createRouter({ engine, endpoints, isTrustedSender: () => true });
});

afterEach(async () => {
  router.dispose();
  endpoints.close();
  await synth.close();
  dir.cleanup();
});

describe("a CRI endpoint's pods measured by this process", () => {
  it('claims the live view and the measurements, and builds nothing until a measurement is asked for', async () => {
    const added = await endpoints.add({ address: `unix://${synth.socketPath}` });
    expect(added.capabilities).toMatchObject({ liveNetwork: true, measurements: true, lab: false, pluginTrace: false });
    // the list's rows ask for the last probe of every pod they show: answered without building the measurer
    const pod = synth.pods[0]!.id;
    expect(await router.handle('sandbox.lastProbe', { endpointId: added.id, id: pod }, sender)).toEqual({ ok: true, result: null });
    expect(rec.sources).toHaveLength(0);
  });

  it('every measuring channel reaches the measurer with its arguments; lifecycle verbs stay CRI calls', async () => {
    const added = await endpoints.add({ address: `unix://${synth.socketPath}` });
    const id = synth.pods[0]!.id;
    const e = added.id;
    const asked: Array<[string, Record<string, unknown>]> = [
      ['sandbox.probe', { endpointId: e, id }],
      ['sandbox.probe', { endpointId: e, id, trace: true }],
      ['sandbox.probe', { endpointId: e, id, dnsName: 'example.org' }],
      ['sandbox.live', { endpointId: e, id }],
      ['sandbox.topology', { endpointId: e, id }],
      ['network.topology', { endpointId: e, network: 'net-a' }],
      ['sandbox.throughput', { endpointId: e, id, durationMs: 1000 }],
      ['sandbox.cniCheck', { endpointId: e, id }],
      ['network.cniStatus', { endpointId: e }],
    ];
    for (const [channel, req] of asked) {
      const reply = await router.handle(channel, req, sender);
      expect(reply, channel).toMatchObject({ ok: true, result: { measuredBy: 'stand-in' } });
    }
    expect(rec.calls).toEqual([
      ['probe', id, undefined],
      ['probe', id, { trace: true }],
      ['probe', id, { dnsName: 'example.org' }],
      ['live', id],
      ['topology', id],
      ['networkTopology', 'net-a'],
      ['throughput', id, { durationMs: 1000 }],
      ['cniCheck', id],
      ['cniStatus'],
    ]);
    // one measurer for the endpoint, over its pods as the runtime describes them (verbose statuses)
    expect(rec.sources).toHaveLength(1);
    const described = await rec.sources[0]!.sandboxes([id]);
    expect(described.map((s) => s.status.id)).toEqual([id]);
    // and nothing was asked of the runtime but descriptions: no Run/Stop/Remove
    const counts = synth.counts();
    for (const verb of ['RunPodSandbox', 'StopPodSandbox', 'RemovePodSandbox']) expect(counts[verb] ?? 0, verb).toBe(0);

    // a lifecycle verb is the runtime's: it goes over CRI (this synthetic runtime serves no StopPodSandbox, so its
    // gRPC UNIMPLEMENTED comes back), never to the measurer
    const stop = await router.handle('sandbox.stop', { endpointId: e, id }, sender);
    expect(stop).toMatchObject({ ok: false, error: { code: 'Unimplemented' } });
    expect(rec.calls).toHaveLength(asked.length);
  });

  it("the endpoint's libcni results dir: default /var/lib/cni/results, another one given at add reaches its measurer; a bad one is refused naming the field", async () => {
    const reply = await router.handle(
      'endpoints.add',
      { address: `unix://${synth.socketPath}`, cniResultsDir: '/srv/k3s/cni/results/' },
      sender,
    );
    expect(reply).toMatchObject({ ok: true, result: { cniResultsDir: '/srv/k3s/cni/results' } });
    const id = (reply as { result: { id: string } }).result.id;
    await router.handle('sandbox.live', { endpointId: id, id: synth.pods[0]!.id }, sender);
    // the engine's cniCacheDir is the dir the results are under
    expect(rec.cacheDirs).toEqual(['/srv/k3s/cni']);
    await endpoints.remove(id);
    const plain = await endpoints.add({ address: `unix://${synth.socketPath}` });
    expect(plain.cniResultsDir).toBe('/var/lib/cni/results');
    await endpoints.remove(plain.id);

    for (const [bad, why] of [
      ['var/lib/cni/results', 'absolute path'],
      ['/var/lib/cni/../cni/results', "'..' segments"],
      ['/var/lib/cni', '<cache dir>/results'],
    ] as const) {
      const refused = await router.handle('endpoints.add', { address: `unix://${synth.socketPath}`, cniResultsDir: bad }, sender);
      expect(refused, bad).toMatchObject({ ok: false, error: { code: 'InvalidArgument' } });
      const message = (refused as { error: { message: string } }).error.message;
      expect(message).toContain(`cniResultsDir: `);
      expect(message).toContain(why);
      // and a direct caller of the registry gets the same refusal, before anything is dialed
      await expect(endpoints.add({ address: `unix://${synth.socketPath}`, cniResultsDir: bad })).rejects.toThrow(/^cniResultsDir: /);
    }
    expect((await endpoints.list()).filter((e) => e.kind === 'cri')).toEqual([]);
  });

  it("the lab's compare with an endpoint pod takes that pod's ADD from the endpoint's measurer (libcni's cache), never over CRI", async () => {
    const added = await endpoints.add({ address: `unix://${synth.socketPath}` });
    const id = synth.pods[0]!.id;
    expect(await endpoints.recordedAdd(added.id, id)).toMatchObject({ measuredBy: 'stand-in', verb: 'recordedAdd' });
    expect(rec.calls).toEqual([['recordedAdd', id]]);
    await expect(endpoints.recordedAdd('local', id)).rejects.toThrow(/sandbox:<id>/);
    // the lab itself is the local engine's: without one the compare is refused before the endpoint is asked
    const reply = await router.handle('lab.diff', { endpointId: 'local', a: 'run-1', b: `endpoint:${added.id}:${id}` }, sender);
    expect(reply).toMatchObject({ ok: false, error: { code: 'Unavailable' } });
    expect(rec.calls).toHaveLength(1);
  });

  it("a measurement's progress is pushed as the endpoint's sandbox event; removing the endpoint closes its measurer", async () => {
    const added = await endpoints.add({ address: `unix://${synth.socketPath}` });
    const pushed: PushedEvent[] = [];
    router.subscribe((ev) => pushed.push(ev));
    await router.handle('sandbox.topology', { endpointId: added.id, id: synth.pods[0]!.id }, sender);
    const progress: SandboxEvent = {
      type: 'sandbox.measureProgress',
      id: synth.pods[0]!.id,
      progress: { direction: 'ingress', elapsedMs: 500, bytes: 625_000, durationMs: 1000 },
    };
    rec.emit!(progress);
    expect(pushed).toContainEqual({ kind: 'sandbox', endpointId: added.id, event: progress });
    await endpoints.remove(added.id);
    await until(() => rec.closed === 1, { what: 'the measurer closed' });
  });

  it('without an engine to measure with (it could not start), a CRI endpoint claims no measurements and says why', async () => {
    const plain = createEndpointRegistry({ local: createUnavailableEngine(new Error('no root')) });
    try {
      const added = await plain.add({ address: `unix://${synth.socketPath}` });
      expect(added.capabilities).toMatchObject({ liveNetwork: false, measurements: false });
      expect(() => plain.measurements(added.id)).toThrow(
        expect.objectContaining({ code: 'Unimplemented', message: expect.stringContaining('not running') }),
      );
    } finally {
      plain.close();
    }
  });

  it("a runtime discovery knows as a node in its own namespaces is measured there: its netns, its root (the CLI's same opening)", async () => {
    const placed = createEndpointRegistry({
      local: createUnavailableEngine(new Error('not needed')),
      foreignMeasurer: recordingMeasurer(rec),
      // the socket reached by another path than discovery's (through a linked directory, as /var/run and /run on a
      // kind node): the same socket file is the same node
      discoverNodes: async () => ({ nodes: [kindNodeView(join(dir.dir, 'cri.sock'))], refused: [] }),
    });
    try {
      symlinkSync(dir.dir, join(dir.dir, 'var-run'));
      const added = await placed.add({ address: `unix://${join(dir.dir, 'var-run', 'cri.sock')}` });
      await placed.measurements(added.id).topology(synth.pods[0]!.id);
      expect(rec.nodes).toEqual([
        expect.objectContaining({
          name: 'kind-worker',
          netnsPath: '/proc/4242/ns/net',
          root: '/proc/4242/root',
          addresses: ['172.18.0.3'],
          podSubnets: ['10.244.1.0/24'],
        }),
      ]);
      // the host's pid numbering: reported pids are used as they are
      expect(rec.nodes[0]!.hostPid).toBeUndefined();
    } finally {
      placed.close();
    }
  });

  it("a runtime discovery does not know is measured unplaced, in the host's namespaces", async () => {
    const added = await endpoints.add({ address: `unix://${synth.socketPath}` });
    await router.handle('sandbox.topology', { endpointId: added.id, id: synth.pods[0]!.id }, sender);
    expect(rec.nodes).toEqual([undefined]);
  });
});

describe('the matrix across added nodes', () => {
  it('opens each chosen endpoint as a node, measures them in one run, and refuses the built-in engine', async () => {
    const asked: Array<{ nodes: Array<{ node: ForeignNode }>; trace: boolean | undefined }> = [];
    let closed = 0;
    const matrix: ProbeMatrix = { measuredAt: 'now', durationMs: 1, nodes: ['kind-worker'], pods: [], cells: [], errors: [] };
    const reg = createEndpointRegistry({
      local: createUnavailableEngine(new Error('not needed')),
      foreignMeasurer: recordingMeasurer(rec),
      nodesMeasurer: (nodes) => ({
        probe: async () => {
          throw new Error('not asked');
        },
        topology: async () => {
          throw new Error('not asked');
        },
        matrix: async (opts) => {
          asked.push({ nodes, trace: opts?.trace });
          return matrix;
        },
        close: () => void closed++,
      }),
      discoverNodes: async () => ({ nodes: [kindNodeView(synth.socketPath)], refused: [] }),
    });
    const r = createRouter({ engine: createUnavailableEngine(new Error('x')), endpoints: reg, isTrustedSender: () => true });
    try {
      const added = await reg.add({ address: `unix://${synth.socketPath}` });
      const reply = await r.handle('nodes.matrix', { endpointIds: [added.id], trace: true }, sender);
      expect(reply).toEqual({ ok: true, result: matrix });
      expect(asked).toHaveLength(1);
      expect(asked[0]!.trace).toBe(true);
      expect(asked[0]!.nodes.map((n) => n.node)).toEqual([
        expect.objectContaining({ name: 'kind-worker', netnsPath: '/proc/4242/ns/net' }),
      ]);
      expect(closed).toBe(1);
      const local = await r.handle('nodes.matrix', { endpointIds: ['local', added.id] }, sender);
      expect(local).toMatchObject({ ok: false, error: { code: 'Unimplemented', message: expect.stringContaining('built-in engine') } });
    } finally {
      r.dispose();
      reg.close();
    }
  });
});
