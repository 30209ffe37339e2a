/**
 * The foreign-pod resolver on recorded verbose info: a containerd 1.6.20 pod (recorded from the test kit's fixture:
 * portmap + bandwidth + an httpd container) and a CRI-O pod shaped from CRI-O's own types. The status goes through the
 * real CRI decoder from a PodSandboxStatusResponse carrying the recorded document, as the client gets it; only the
 * node's files are a fake (what exists, what the cache dir holds).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeSandboxStatus } from '../../electron/cri/client/decode-status';
import * as pb from '../../electron/cri/generated/runtime_v1';
import { ForeignPods } from '../../electron/engine/foreign/lookup';
import { foreignResolvConf, resolveForeignPod, verboseFacts, type ForeignSandbox } from '../../electron/engine/foreign/resolve';
import { PodscopeError } from '../../shared/domain/errors';
import { foreignRecordedAdd } from '../../electron/engine/foreign/recorded-add';
import { diffSides, runSide, sandboxSide } from '../../electron/engine/lab/diff';
import type { LabRun } from '../../shared/domain/lab';
import { FakeNodeFiles } from '../../testkit/fakes/fake-node-files';

interface Recording {
  status: { id: string; metadata: pb.PodSandboxMetadata; state: string; createdAt: string; ip: string; additionalIps: string[] };
  verbose: Record<string, unknown>;
  cacheDir: string;
  cache: Record<string, object>;
}

const load = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/foreign/${name}`, import.meta.url), 'utf8')) as Recording;

function sandboxOf(rec: Recording, runtimeName: string, verbose: unknown = rec.verbose): ForeignSandbox {
  const res = pb.PodSandboxStatusResponse.fromPartial({
    status: {
      id: rec.status.id,
      metadata: rec.status.metadata,
      state: rec.status.state === 'SANDBOX_READY' ? pb.PodSandboxState.SANDBOX_READY : pb.PodSandboxState.SANDBOX_NOTREADY,
      createdAt: rec.status.createdAt,
      network: { ip: rec.status.ip, additionalIps: rec.status.additionalIps.map((ip) => ({ ip })) },
    },
    info: verbose === undefined ? {} : { info: JSON.stringify(verbose) },
  });
  return { runtimeName, status: decodeSandboxStatus(res, runtimeName), ...(verbose !== undefined && { verbose }) };
}

const netnsOf = (v: Record<string, unknown>) => verboseFacts(v).specNetns!;

describe('a containerd 1.6.20 pod resolved to PodFacts', () => {
  const rec = load('containerd-1.6.20-httpd.json');
  const netns = netnsOf(rec.verbose);

  it('takes the netns from the OCI spec, the attachments from libcni cache, the interfaces from cniResult', async () => {
    const files = new FakeNodeFiles(rec.cache, [netns]);
    const pod = await resolveForeignPod(files, sandboxOf(rec, 'containerd'), { cniCacheDir: rec.cacheDir });
    expect(pod.netnsPath).toBe(netns);
    expect(pod.state).toBe('Ready');
    expect(pod.pausePid).toBe(rec.verbose.pid);
    expect(pod.network!.networks.map((n) => [n.network, n.ifName])).toEqual([
      ['cni-loopback', 'lo'],
      [expect.stringMatching(/ctd$/), 'eth0'],
    ]);
    const eth0 = pod.network!.networks.find((n) => n.ifName === 'eth0')!;
    expect(eth0.cacheFile).toBe(`/var/lib/cni/results/${eth0.network}-${pod.id}-eth0`);
    expect(eth0.result!.ips!.map((i) => i.address)).toEqual(['10.132.0.2/24', 'fd00:132::2/64']);
    expect(eth0.capabilityArgs).toHaveProperty('portMappings');
    expect(eth0.capabilityArgs).toHaveProperty('bandwidth');
    expect(pod.network!.interfaces.eth0!.ipConfigs.map((c) => c.ip)).toEqual(['10.132.0.2', 'fd00:132::2']);
    expect(pod.ipSelection).toMatchObject({ preference: 'ipv4', primary: '10.132.0.2', eth0Ips: ['10.132.0.2', 'fd00:132::2'] });
    expect(pod.config.port_mappings).toEqual([expect.objectContaining({ container_port: 80 })]);
    expect(pod.resolvedFrom.netns).toContain('OCI spec');
  });

  it("falls back to the pause process's /proc/<pid>/ns/net when the netns path is not visible from here", async () => {
    const files = new FakeNodeFiles(rec.cache, [`/proc/${rec.verbose.pid as number}/ns/net`]);
    const pod = await resolveForeignPod(files, sandboxOf(rec, 'containerd'), { cniCacheDir: rec.cacheDir });
    expect(pod.netnsPath).toBe(`/proc/${rec.verbose.pid as number}/ns/net`);
    expect(pod.resolvedFrom.netns).toContain('pause process');
  });

  it('names the netns as the missing fact and every place it looked', async () => {
    const files = new FakeNodeFiles(rec.cache, []);
    const err = await resolveForeignPod(files, sandboxOf(rec, 'containerd'), { cniCacheDir: rec.cacheDir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PodscopeError);
    expect((err as PodscopeError).code).toBe('FailedPrecondition');
    expect((err as Error).message).toContain('cannot find its network namespace');
    expect((err as Error).message).toContain(netns);
    expect((err as Error).message).toContain(`/proc/${rec.verbose.pid as number}/ns/net`);
  });

  it('names the attachments as the missing fact and the cache dir it read when the cache has no entry', async () => {
    const files = new FakeNodeFiles({ '/elsewhere/results/other-x-eth0': '{}' }, [netns]);
    const err = await resolveForeignPod(files, sandboxOf(rec, 'containerd'), { cniCacheDir: '/elsewhere' }).catch((e: unknown) => e);
    expect((err as Error).message).toContain('cannot find its CNI attachments');
    expect((err as Error).message).toContain(`/elsewhere/results has no <network>-${rec.status.id}-<ifname> entry`);
    expect((err as Error).message).toContain('names interfaces (');
    // the cache dir is configurable per endpoint: the same pod resolves from where its runtime keeps the cache
    const moved = new FakeNodeFiles(
      Object.fromEntries(Object.entries(rec.cache).map(([p, v]) => [p.replace('/var/lib/cni/', '/srv/cni/'), v])),
      [netns],
    );
    const pod = await resolveForeignPod(moved, sandboxOf(rec, 'containerd'), { cniCacheDir: '/srv/cni' });
    expect(pod.network!.networks.find((n) => n.ifName === 'eth0')!.cacheFile).toMatch(/^\/srv\/cni\/results\//);
  });

  it('a stopped pod resolves without a netns (the features refuse it as not ready) and reads nothing', async () => {
    const stopped = { ...rec, status: { ...rec.status, state: 'SANDBOX_NOTREADY' } };
    const files = new FakeNodeFiles(rec.cache, [netns]);
    const pod = await resolveForeignPod(files, sandboxOf(stopped, 'containerd', { ...rec.verbose, netNamespaceClosed: true }), {
      cniCacheDir: rec.cacheDir,
    });
    expect(pod.netnsClosed).toBe(true);
    expect(pod.netnsPath).toBeUndefined();
    expect(files.looked).toEqual([]);
  });

  it('the lookup finds a pod by prefix, throws its resolve error by id, and leaves it out of the peers', async () => {
    const good = sandboxOf(rec, 'containerd');
    const otherRec = { ...rec, status: { ...rec.status, id: 'b'.repeat(64) } };
    const bad = sandboxOf(otherRec, 'containerd', {
      ...rec.verbose,
      runtimeSpec: { linux: { namespaces: [{ type: 'network', path: '/gone' }] } },
      pid: 0,
      cniResult: null,
    });
    const files = new FakeNodeFiles(rec.cache, [netns]);
    const pods = await ForeignPods.resolve(files, [good, bad], { cniCacheDir: rec.cacheDir });
    expect(pods.get(rec.status.id.slice(0, 12)).id).toBe(rec.status.id);
    expect(() => pods.get('bbbb')).toThrow(/cannot find its network namespace; looked at \/gone/);
    expect(pods.all().map((p) => p.id)).toEqual([rec.status.id]);
    expect(() => pods.get('nope')).toThrow(/not found/);
  });
});

describe("a containerd pod's ADD from libcni's cache, for the lab's compare", () => {
  const rec = load('containerd-1.6.20-httpd.json');
  const netns = netnsOf(rec.verbose);

  it("rebuilds each plugin's stdin from the cached conflist and capability args; the final result is the last plugin's", async () => {
    const files = new FakeNodeFiles(rec.cache, [netns]);
    const pods = await ForeignPods.resolve(files, [sandboxOf(rec, 'containerd')], { cniCacheDir: rec.cacheDir });
    const add = await foreignRecordedAdd(files, pods, rec.status.id.slice(0, 12));
    const eth0 = pods.get(rec.status.id).network!.networks.find((n) => n.ifName === 'eth0')!;
    expect(add.fromCache).toBe(eth0.cacheFile);
    expect(add.plugins.map((p) => p.type)).toEqual(['bridge', 'portmap', 'bandwidth']);
    const stdin = add.plugins.map((p) => JSON.parse(p.stdin) as Record<string, unknown>);
    // as libcni builds it: the list's name and version on every plugin, runtimeConfig for the capabilities each declares
    for (const s of stdin) expect(s).toMatchObject({ name: eth0.network, cniVersion: eth0.cniVersion });
    expect(stdin[1]!.runtimeConfig).toHaveProperty('portMappings');
    expect(stdin[2]!.runtimeConfig).toHaveProperty('bandwidth');
    expect(stdin.some((s) => 'prevResult' in s)).toBe(false);
    expect(add.plugins.map((p) => p.stdout !== '')).toEqual([false, false, true]);
    expect(add.result).toEqual(eth0.result);

    // a run of the same chain with another portmap: its stdin differs; nothing the cache does not keep is a difference
    const run = {
      id: 'r1',
      name: eth0.network,
      containerId: 'lab-r1',
      netns: '/run/netns/lab-r1',
      plugins: add.plugins.map((p, i) => ({
        ...p,
        stdin:
          i === 1 ? JSON.stringify({ ...stdin[1], prevResult: { ips: [] }, snat: false }) : JSON.stringify({ ...stdin[i], prevResult: {} }),
        stdout: '{"cniVersion":"1.0.0"}',
        stderr: 'chatter',
        durationMs: 5,
      })),
      result: add.result,
    } as unknown as LabRun;
    const d = diffSides(runSide(run), sandboxSide(add));
    expect(d.plugins.map((p) => [p.type, p.same])).toEqual([
      ['bridge', true],
      ['portmap', false],
      ['bandwidth', true],
    ]);
    expect(d.plugins[1]!.stdin).toEqual([{ path: 'snat', a: false, change: 'removed' }]);
    expect(d.plugins.every((p) => p.result.length === 0 && !p.stderr && !p.exitCode)).toBe(true);
    expect(d.notes.join('\n')).toContain(`rebuilt from libcni's cache (${eth0.cacheFile})`);
  });

  it('a pod with no cache entry of a network says so', async () => {
    const files = new FakeNodeFiles(rec.cache, [netns]);
    const pods = await ForeignPods.resolve(files, [sandboxOf(rec, 'containerd')], { cniCacheDir: rec.cacheDir });
    files.files.clear();
    await expect(foreignRecordedAdd(files, pods, rec.status.id)).rejects.toThrow(/libcni's cache entry .* cannot be read/);
  });
});

describe('a CRI-O pod resolved to PodFacts (verbose info from CRI-O types: image, pid, runtimeSpec)', () => {
  const rec = load('cri-o-web.json');
  const netns = netnsOf(rec.verbose);

  it('has no CNI result in its verbose info: interfaces folded from the cached result', async () => {
    const files = new FakeNodeFiles(rec.cache, [netns]);
    const pod = await resolveForeignPod(files, sandboxOf(rec, 'cri-o'), { cniCacheDir: rec.cacheDir });
    expect(pod.netnsPath).toBe(netns);
    expect(pod.pausePid).toBe(4242);
    expect(pod.network!.networks).toEqual([expect.objectContaining({ network: 'crio', ifName: 'eth0', cniVersion: '1.0.0' })]);
    expect(pod.network!.interfaces.eth0).toEqual({
      mac: '0a:58:0a:55:00:07',
      sandbox: netns,
      ipConfigs: [{ ip: '10.85.0.7', gateway: '10.85.0.1' }],
    });
    expect(pod.ipSelection?.primary).toBe('10.85.0.7');
  });

  it('a spoofed (host-network) infra container: only a runtimeSpec without a network namespace, nothing to resolve', async () => {
    const files = new FakeNodeFiles({}, []);
    const hostRec = { ...rec, status: { ...rec.status, ip: '' } };
    const spec = { runtimeSpec: { linux: { namespaces: [{ type: 'pid' }, { type: 'mount' }] } } };
    const pod = await resolveForeignPod(files, sandboxOf(hostRec, 'cri-o', spec), { cniCacheDir: rec.cacheDir });
    expect(pod.netnsPath).toBeUndefined();
    expect(pod.network).toBeUndefined();
  });
});

describe("a pod of a node in namespaces of its own (a kind node): found through the node's root and pid numbering", () => {
  const rec = load('containerd-1.6.20-httpd.json');
  const netns = netnsOf(rec.verbose);
  const pid = rec.verbose.pid as number;
  const root = '/proc/4242/root';
  /** the node's files as the host sees them: everything under its root */
  const underRoot = (cache: Record<string, object>) => Object.fromEntries(Object.entries(cache).map(([p, t]) => [`${root}${p}`, t]));
  const asRun = (p: string) => p.replace(/^\/var\/run\//, '/run/');

  it('the netns path the runtime wrote is read through its root (/var/run as /run), never the same path on this host', async () => {
    // this host has a file at the same path: it is not the node's
    const files = new FakeNodeFiles(underRoot(rec.cache), [netns, `${root}${asRun(netns)}`]);
    const node = { name: 'kind-worker', root, addresses: [], podSubnets: [] };
    const pod = await resolveForeignPod(files, sandboxOf(rec, 'containerd'), { cniCacheDir: rec.cacheDir, node });
    expect(pod.netnsPath).toBe(`${root}${asRun(netns)}`);
    expect(pod.resolvedFrom.netns).toContain("through the node's root");
    expect(pod.network!.networks.find((n) => n.ifName === 'eth0')!.cacheFile).toMatch(new RegExp(`^${root}/var/lib/cni/results/`));
  });

  it("the pause pid the node reports is mapped to this host's before /proc/<pid>/ns/net is used", async () => {
    const hostPid = pid + 1000;
    // the reported number names another process here: only the mapped one may be used
    const files = new FakeNodeFiles(underRoot(rec.cache), [`/proc/${pid}/ns/net`, `/proc/${hostPid}/ns/net`]);
    const node = { name: 'kind-worker', root, hostPid: (r: number) => (r === pid ? hostPid : undefined), addresses: [], podSubnets: [] };
    const pod = await resolveForeignPod(files, sandboxOf(rec, 'containerd'), { cniCacheDir: rec.cacheDir, node });
    expect(pod.netnsPath).toBe(`/proc/${hostPid}/ns/net`);
    expect(pod.pausePid).toBe(pid);
    expect(pod.pauseHostPid).toBe(hostPid);
  });

  it("the pod's resolv.conf (no dns_config: its nameservers) is read through the pause's root by this host's pid, never the reported one", async () => {
    const hostPid = pid + 1000;
    const conf = 'nameserver 10.96.0.10\nsearch svc.cluster.local\n';
    const files = new FakeNodeFiles(
      {
        ...underRoot(rec.cache),
        [`/proc/${hostPid}/root/etc/resolv.conf`]: conf,
        [`/proc/${pid}/root/etc/resolv.conf`]: 'nameserver 192.0.2.1\n',
      },
      [`/proc/${hostPid}/ns/net`],
    );
    const node = { name: 'kind-worker', root, hostPid: (r: number) => (r === pid ? hostPid : undefined), addresses: [], podSubnets: [] };
    const pod = await resolveForeignPod(files, sandboxOf(rec, 'containerd'), { cniCacheDir: rec.cacheDir, node });
    expect(await foreignResolvConf(files, pod)).toBe(conf);
    // a pause this host cannot see: nothing read, nothing claimed
    expect(await foreignResolvConf(files, { ...pod, pauseProcPid: undefined })).toBeUndefined();
  });

  it('a pause pid no process of the node carries is named among the places looked', async () => {
    const files = new FakeNodeFiles(underRoot(rec.cache), [`/proc/${pid}/ns/net`]);
    const node = { name: 'kind-worker', root, hostPid: () => undefined, addresses: [], podSubnets: [] };
    const err = await resolveForeignPod(files, sandboxOf(rec, 'containerd'), { cniCacheDir: rec.cacheDir, node }).catch((e: unknown) => e);
    expect((err as Error).message).toContain(`the pause pid ${pid}: no process of this node's pid namespace carries it`);
  });
});
