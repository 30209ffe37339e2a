/**
 * Node discovery over a described machine (fake /proc at the OS boundary): a host containerd on its well-known
 * socket, a kind-shaped node's containerd in its own net, mnt, pid and UTS namespaces whose socket is found from its
 * process's listeners and addressed through /proc/<pid>/root, a socket that is no CRI runtime, and a process that is
 * no runtime at all.
 */
import { describe, expect, it } from 'vitest';
import { discoverNodes, hostPidOf, nsPidOf, parseNetUnix, type RuntimeVersion } from '../../electron/endpoints/nodes';
import { fakeProcSource, type FakeMachine } from '../../testkit/fakes/fake-proc-source';

const HOST = { net: 'net:[1]', mnt: 'mnt:[1]', pid: 'pid:[1]', uts: 'uts:[1]' };
const KIND = { net: 'net:[20]', mnt: 'mnt:[20]', pid: 'pid:[20]', uts: 'uts:[20]' };
const conflist = (name: string, bridge: string, subnet: string) =>
  JSON.stringify({
    cniVersion: '1.0.0',
    name,
    plugins: [{ type: 'bridge', bridge, ipam: { type: 'host-local', ranges: [[{ subnet }]] } }, { type: 'portmap' }],
  });

function machine(): FakeMachine {
  return {
    self: HOST,
    processes: [
      { pid: 100, comm: 'containerd', cmdline: ['/usr/bin/containerd'], ns: HOST, fds: [11, 12] },
      {
        pid: 200,
        comm: 'containerd',
        cmdline: ['/usr/bin/containerd', '--config', '/etc/kind/config.toml'],
        ns: KIND,
        nsPids: [200, 7],
        fds: [21, 22, 23],
      },
      // a shell in the kind node listening on nothing that matters
      { pid: 201, comm: 'sh', ns: KIND, fds: [24] },
      // a runtime-named process whose socket answers no CRI
      { pid: 300, comm: 'crio', ns: HOST, fds: [31] },
    ],
    unix: {
      'net:[1]': [
        { inode: 11, path: '/run/containerd/containerd.sock' },
        { inode: 12, path: '/run/containerd/containerd.sock.ttrpc' },
        { inode: 31, path: '/run/crio/crio.sock' },
      ],
      'net:[20]': [
        { inode: 21, path: '/run/containerd/containerd.sock' },
        { inode: 22, path: '/run/containerd/debug.sock' },
        { inode: 23, path: '/run/containerd/s/0123abcd' },
        { inode: 24, path: '/tmp/other.sock' },
      ],
    },
    files: {
      '/etc/cni/net.d/10-host.conflist': conflist('hostnet', 'cni0', '10.88.0.0/16'),
      '/proc/200/root/etc/kind/config.toml': '[plugins."io.containerd.grpc.v1.cri".cni]\n  conf_dir = "/etc/kind/net.d"\n',
      '/proc/200/root/etc/kind/net.d/10-kindnet.conflist': conflist('kindnet', 'kbr0', '10.244.1.0/24'),
    },
    sockets: ['/run/containerd/containerd.sock'],
    hostnames: { 'uts:[1]': 'laptop', 'uts:[20]': 'kind-worker' },
    nets: {
      'net:[1]': {
        addresses: [
          { ifName: 'lo', family: 'inet', local: '127.0.0.1', prefixLen: 8, scope: 'host' },
          { ifName: 'eth0', family: 'inet', local: '192.168.1.5', prefixLen: 24, scope: 'global' },
          { ifName: 'cni0', family: 'inet', local: '10.88.0.1', prefixLen: 16, scope: 'global' },
        ],
        routes: [{ dst: 'default', gateway: '192.168.1.1', dev: 'eth0' }],
      },
      'net:[20]': {
        addresses: [{ ifName: 'eth0', family: 'inet', local: '172.18.0.3', prefixLen: 16, scope: 'global' }],
        routes: [
          { dst: 'default', gateway: '172.18.0.1', dev: 'eth0' },
          { dst: '10.244.1.0/24', dev: 'kbr0', protocol: 'kernel', scope: 'link' },
          { dst: '10.244.9.0/24', dev: 'kbr0', protocol: 'kernel', scope: 'link' },
          { dst: '10.244.2.0/24', gateway: '172.18.0.4', dev: 'eth0' },
        ],
      },
    },
  };
}

const CTD: RuntimeVersion = { runtimeName: 'containerd', runtimeVersion: '1.6.20', runtimeApiVersion: 'v1' };

async function discover(m: FakeMachine, answering = ['/run/containerd/containerd.sock', '/proc/200/root/run/containerd/containerd.sock']) {
  const asked: string[] = [];
  const found = await discoverNodes({
    proc: fakeProcSource(m),
    version: async (endpoint) => {
      asked.push(endpoint);
      if (!answering.includes(endpoint)) throw new Error('not a CRI runtime.v1 endpoint');
      return CTD;
    },
  });
  return { ...found, asked: asked.sort() };
}

describe('node discovery', () => {
  it('asks only the runtimes’ CRI sockets: not ttrpc, debug or shim sockets, not sockets of other processes', async () => {
    const { asked } = await discover(machine());
    expect(asked).toEqual(['/proc/200/root/run/containerd/containerd.sock', '/run/containerd/containerd.sock', '/run/crio/crio.sock']);
  });

  it('finds the kind node through its process, addressed through its root, named by its UTS hostname', async () => {
    const { nodes } = await discover(machine());
    const kind = nodes.find((n) => n.name === 'kind-worker');
    expect(kind).toMatchObject({
      nameFrom: 'uts-hostname',
      endpoint: '/proc/200/root/run/containerd/containerd.sock',
      socketPath: '/run/containerd/containerd.sock',
      foundBy: 'process',
      runtimeName: 'containerd',
      runtimeVersion: '1.6.20',
      pid: 200,
      nsPid: 7,
      namespaces: { net: { id: 'net:[20]', host: false }, mnt: { host: false }, pid: { host: false }, uts: { host: false } },
      addresses: [{ ifName: 'eth0', cidr: '172.18.0.3/16' }],
      routes: [{ dst: '10.244.2.0/24', via: '172.18.0.4', dev: 'eth0' }],
    });
    // its CNI config is read through its root at the conf_dir of its own config file; a connected route on its CNI
    // bridge outside the configured range is a pod subnet too
    expect(kind!.podSubnets).toEqual([
      { cidr: '10.244.1.0/24', source: 'cni-config', from: 'kindnet' },
      { cidr: '10.244.9.0/24', source: 'route', from: 'kbr0' },
    ]);
  });

  it('names a runtime in the host’s UTS namespace by host, runtime and socket — stably', async () => {
    const first = await discover(machine());
    const host = first.nodes.find((n) => n.pid === 100)!;
    expect(host).toMatchObject({ nameFrom: 'derived', endpoint: '/run/containerd/containerd.sock', foundBy: 'well-known' });
    expect(host.name).toMatch(/^laptop-containerd-[0-9a-f]{6}$/);
    expect(host.nsPid).toBeUndefined();
    expect(host.namespaces.net.host).toBe(true);
    // addresses exclude loopback and the pods' bridge
    expect(host.addresses).toEqual([{ ifName: 'eth0', cidr: '192.168.1.5/24' }]);
    expect(host.podSubnets).toEqual([{ cidr: '10.88.0.0/16', source: 'cni-config', from: 'hostnet' }]);
    expect((await discover(machine())).nodes.find((n) => n.pid === 100)!.name).toBe(host.name);
  });

  it('lists a socket that does not answer CRI Version as refused, not as a node', async () => {
    const { nodes, refused } = await discover(machine());
    expect(nodes.map((n) => n.endpoint)).not.toContain('/run/crio/crio.sock');
    expect(refused).toEqual([{ endpoint: '/run/crio/crio.sock', pid: 300, reason: 'not a CRI runtime.v1 endpoint' }]);
  });

  it('still tries a well-known socket whose owner it cannot see', async () => {
    const m = machine();
    m.processes = m.processes.filter((p) => p.pid !== 100);
    const { nodes } = await discover(m);
    expect(nodes.find((n) => n.endpoint === '/run/containerd/containerd.sock')).toMatchObject({
      foundBy: 'well-known',
      nameFrom: 'derived',
    });
  });

  it('keeps a node whose netns cannot be read, saying so', async () => {
    const m = machine();
    delete m.nets!['net:[20]'];
    const kind = (await discover(m)).nodes.find((n) => n.name === 'kind-worker')!;
    expect(kind.addresses).toEqual([]);
    expect(kind.problems.join('\n')).toMatch(/addresses: no network namespace/);
  });

  it('reads listeners from /proc/net/unix and NSpid from status', () => {
    const text = [
      'Num       RefCount Protocol Flags    Type St Inode Path',
      '0000000000000000: 00000002 00000000 00010000 0001 01 4242 /run/containerd/containerd.sock',
      '0000000000000000: 00000003 00000000 00000000 0001 03 4243 /run/containerd/containerd.sock',
      '0000000000000000: 00000002 00000000 00010000 0001 01 4244 @abstract',
    ].join('\n');
    expect(parseNetUnix(text)).toEqual([
      { inode: 4242, path: '/run/containerd/containerd.sock' },
      { inode: 4244, path: '@abstract' },
    ]);
    expect(nsPidOf('Name:\tcontainerd\nNSpid:\t4711\t1\n')).toBe(1);
    expect(nsPidOf('NSpid:\t4711\n')).toBeUndefined();
  });

  describe('pids a runtime in its own pid namespace reports', () => {
    const OTHER = { ...KIND, pid: 'pid:[30]' };
    const POD = { ...KIND, pid: 'pid:[21]' };
    const m = (): FakeMachine => ({
      self: HOST,
      processes: [
        { pid: 200, comm: 'containerd', ns: KIND, nsPids: [200, 1] },
        { pid: 210, comm: 'containerd-shim', ns: KIND, nsPids: [210, 9], ppid: 200 },
        // the pause: in the pod's own pid namespace under the node's, pid 1 there and 12 in the node's
        { pid: 211, comm: 'pause', ns: POD, nsPids: [211, 12, 1], ppid: 210 },
        // another node's process that is pid 12 in its own namespace at the same depth
        { pid: 300, comm: 'containerd', ns: OTHER, nsPids: [300, 1] },
        { pid: 301, comm: 'pause', ns: OTHER, nsPids: [301, 12], ppid: 300 },
      ],
    });

    it('maps the reported pid to the host pid through NSpid at the node’s depth, under the node’s processes', () => {
      expect(hostPidOf(fakeProcSource(m()), 200, 12)).toBe(211);
      expect(hostPidOf(fakeProcSource(m()), 300, 12)).toBe(301);
    });

    it('keeps a pid of a runtime in the host’s pid namespace, and finds nothing for a pid no process has', () => {
      const machine = m();
      machine.processes.push({ pid: 100, comm: 'containerd', ns: HOST });
      expect(hostPidOf(fakeProcSource(machine), 100, 4711)).toBe(4711);
      expect(hostPidOf(fakeProcSource(machine), 200, 99)).toBeUndefined();
    });
  });
});
