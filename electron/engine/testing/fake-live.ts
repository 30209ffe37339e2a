/** A LiveReader that returns what a test puts in it (the real one needs a netns, tc and iptables). */
import type { LiveReader, RawLiveNetwork } from '../netns/live-reader';

export class FakeLiveReader implements LiveReader {
  readonly reads: Array<{ netnsPath: string; hostDevices: string[] }> = [];
  next: RawLiveNetwork = { interfaces: [], routes: [], hostLinkKinds: {}, qdiscs: {}, nat: { v4: [], v6: [] }, errors: [] };

  async read(netnsPath: string, hostDevices: string[]): Promise<RawLiveNetwork> {
    this.reads.push({ netnsPath, hostDevices });
    return this.next;
  }
}
