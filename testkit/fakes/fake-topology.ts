/**
 * A topology reader over the FakeKernel: each pod netns holds the links the fake CNI plugins put there (the same
 * view as the fake live reader), the host side is empty. Enough for the UI's topology panels to draw and stamp a
 * reading; tests that need veth peers and bridges use the real reader on a real netns.
 */
import type { RawTopology, TopologyReader } from '../../electron/engine/topology/reader';
import type { FakeKernel } from './fake-kernel';

export class FakeTopologyReader implements TopologyReader {
  reads = 0;
  constructor(private readonly kernel: FakeKernel) {}

  async read(netnsPaths: string[]): Promise<RawTopology> {
    this.reads++;
    const pods: RawTopology['pods'] = {};
    for (const path of netnsPaths) {
      pods[path] = this.kernel.liveView(path, []).interfaces.map((i) => ({
        ifindex: i.ifindex,
        ifname: i.name,
        mtu: i.mtu,
        operstate: i.state,
        address: i.mac,
        addr_info: i.addresses.map((a) => ({
          family: a.family === 6 ? 'inet6' : 'inet',
          local: a.address,
          prefixlen: a.prefixLen,
          scope: a.scope,
        })),
      }));
    }
    return { host: [], bridgePorts: [], pods, errors: [] };
  }
}
