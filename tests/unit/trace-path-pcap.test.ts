/**
 * A path's "Download pcapng" holds that path's flow only. Three flows crossed the same hops while one probe traced
 * them (the dropped one, a connected one, and one that was refused); the pcapng of the dropped path carries every
 * packet of its flow on every hop and no packet of the others, each hop still an interface of its own.
 */
import { describe, expect, it } from 'vitest';
import { parsePcap, type HopCapture } from '../../electron/engine/trace/capture';
import { flowCaptures, pcapngOf } from '../../electron/engine/trace/trace-run';

/** a legacy pcap (as tcpdump -w writes it) of Ethernet frames carrying IPv4/TCP */
function pcap(frames: Array<{ sport: number; dport: number; flags: number }>): Buffer {
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b2c3d4, 0);
  head.writeUInt16LE(2, 4);
  head.writeUInt16LE(4, 6);
  head.writeUInt32LE(128, 16);
  head.writeUInt32LE(1, 20);
  const recs = frames.map((f, i) => {
    const d = Buffer.alloc(14 + 20 + 20);
    d.writeUInt16BE(0x0800, 12);
    d[14] = 0x45;
    d[14 + 9] = 6;
    d.writeUInt16BE(f.sport, 34);
    d.writeUInt16BE(f.dport, 36);
    d[34 + 13] = f.flags;
    const h = Buffer.alloc(16);
    h.writeUInt32LE(i + 1, 0);
    h.writeUInt32LE(d.length, 8);
    h.writeUInt32LE(d.length, 12);
    return Buffer.concat([h, d]);
  });
  return Buffer.concat([head, ...recs]);
}

/** the TCP ports of every enhanced packet block of a pcapng (Ethernet + IPv4 frames) */
function pcapngPorts(buf: Buffer): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let off = 0; off + 12 <= buf.length;) {
    const type = buf.readUInt32LE(off);
    const len = buf.readUInt32LE(off + 4);
    if (type === 6) {
      const data = off + 28;
      out.push([buf.readUInt16BE(data + 34), buf.readUInt16BE(data + 36)]);
    }
    off += len;
  }
  return out;
}

const DROPPED = 22222;
const SYN = 0x02;
const hop = (iface: string, frames: Parameters<typeof pcap>[0]): HopCapture => ({
  hop: { netns: 'host', interface: iface, label: iface },
  ...parsePcap(pcap(frames)),
});

describe("a path's pcapng", () => {
  const captured = [
    hop('psc-x', [
      { sport: DROPPED, dport: 8080, flags: SYN },
      { sport: 23000, dport: 8080, flags: SYN },
      { sport: 8080, dport: 23000, flags: 0x12 },
      { sport: DROPPED, dport: 8080, flags: SYN },
      { sport: 24000, dport: 80, flags: SYN },
      { sport: 80, dport: 24000, flags: 0x14 },
    ]),
    hop('veth1', [
      { sport: 23000, dport: 8080, flags: SYN },
      { sport: 8080, dport: 23000, flags: 0x12 },
    ]),
  ];

  it("holds every packet of the path's flow and none of the probe's other flows", () => {
    const own = pcapngOf(flowCaptures(captured, DROPPED));
    expect(own.packets).toBe(2);
    expect(pcapngPorts(own.pcapng)).toEqual([
      [DROPPED, 8080],
      [DROPPED, 8080],
    ]);
    // both hops are still interfaces of it: the one that never saw the flow says so by having no packet
    expect(own.interfaces).toEqual(['host/psc-x', 'host/veth1']);
  });

  it("keeps a flow's packets both ways, and the probe's whole capture still holds every flow", () => {
    const connected = pcapngOf(flowCaptures(captured, 23000));
    expect(pcapngPorts(connected.pcapng).sort()).toEqual(
      [
        [23000, 8080],
        [8080, 23000],
        [23000, 8080],
        [8080, 23000],
      ].sort(),
    );
    expect(pcapngOf(captured).packets).toBe(8);
  });
});
