/**
 * A topology reader over the fake kernel: each pod netns holds the links the FakeCniManager's result put there
 * (same view as the fake live reader), the host side is empty. Enough for the UI's topology panels to draw and stamp
 * a reading; tests that need veth peers and bridges use the real reader on a real netns.
 */
import type { FakeCniManager } from './fake-cni';
import { fakeKernelView } from './fake-kernel';
import type { RawTopology, TopologyReader } from '../../electron/engine/topology/reader';

export class FakeTopologyReader implements TopologyReader {
  reads = 0;
  constructor(private readonly cni: FakeCniManager) {}

  async read(netnsPaths: string[]): Promise<RawTopology> {
    this.reads++;
    const pods: RawTopology['pods'] = {};
    for (const path of netnsPaths) {
      pods[path] = fakeKernelView(this.cni, path, []).interfaces.map((i) => ({
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
