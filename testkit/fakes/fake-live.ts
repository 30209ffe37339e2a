/**
 * A LiveReader for tests. By default it returns what a test puts in `next`; given a `source` (the builder wires the
 * FakeKernel the fake CNI plugins wrote to, see fake-kernel.ts) it reports what those plugins set up. `tamper` then
 * edits what "the kernel" says for one netns (a tbf the plugin never set, a flushed DNAT rule), so the engine's own
 * checks see a mismatch the fakes would otherwise never produce.
 */
import type { LiveReader, RawLiveNetwork } from '../../electron/engine/netns/live-reader';

export type LiveSource = (netnsPath: string, hostDevices: string[]) => RawLiveNetwork;

export class FakeLiveReader implements LiveReader {
  readonly reads: Array<{ netnsPath: string; hostDevices: string[] }> = [];
  next: RawLiveNetwork = { interfaces: [], routes: [], hostLinkKinds: {}, qdiscs: {}, nat: { v4: [], v6: [] }, errors: [] };
  /** where reads come from when set; `next` otherwise */
  source: LiveSource | undefined;
  /** the next read() throws this (once) */
  readError: Error | undefined;
  private readonly tampers = new Map<string, (raw: RawLiveNetwork) => RawLiveNetwork>();

  constructor(source?: LiveSource) {
    this.source = source;
  }

  /** Every later read of `netnsPath` goes through `edit` (last call wins). */
  tamper(netnsPath: string, edit: (raw: RawLiveNetwork) => RawLiveNetwork): void {
    this.tampers.set(netnsPath, edit);
  }

  async read(netnsPath: string, hostDevices: string[]): Promise<RawLiveNetwork> {
    this.reads.push({ netnsPath, hostDevices });
    const error = this.readError;
    this.readError = undefined;
    if (error) throw error;
    const raw = structuredClone(this.source ? this.source(netnsPath, hostDevices) : this.next);
    return this.tampers.get(netnsPath)?.(raw) ?? raw;
  }
}
