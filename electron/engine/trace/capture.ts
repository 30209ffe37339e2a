/**
 * Seen-at hops: the traced flows' packets captured on every interface of their path (a pod's eth0, its host veth, the
 * bridge) with tcpdump, filtered on the flows' own source ports, started before the connects and stopped after. Which
 * hop saw a flow's packets, each way, locates a drop outside netfilter (a qdisc, a down bridge port, a neighbour that
 * never answered) between the last hop that saw them and the first that did not.
 *
 * Bounded: 128 bytes of each packet, at most 1000 packets per interface, and only while the trace runs. The captures
 * are merged into one pcapng with an interface block per hop, written here rather than with mergecap (Wireshark's
 * tool, not installed with tcpdump) since the format is a few fixed blocks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KernelReader } from '../kernel/types';

export const CAPTURE_SNAPLEN = 128;
export const CAPTURE_MAX_PACKETS = 1000;

export interface Hop {
  /** "host" or a sandbox id */
  netns: string;
  netnsPath?: string;
  interface: string;
  /** "the pod's eth0", "host veth of pod web", "bridge psc-x" */
  label: string;
}

export interface CapturedPacket {
  tsMicros: bigint;
  sport: number;
  dport: number;
  /** TCP flags as letters: S, S., ., P., F., R, … */
  flags: string;
  data: Buffer;
  origLen: number;
}

export interface HopCapture {
  hop: Hop;
  linktype: number;
  packets: CapturedPacket[];
  /** what kept it from capturing (tcpdump missing, the interface gone) */
  error?: string;
}

/** the packets of a legacy pcap file (what `tcpdump -w` writes) with their TCP ports, Ethernet or raw IP */
export function parsePcap(buf: Buffer): { linktype: number; packets: CapturedPacket[] } {
  if (buf.length < 24) return { linktype: 1, packets: [] };
  const magic = buf.readUInt32LE(0);
  const le = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  const nano = magic === 0xa1b23c4d || magic === 0x4d3cb2a1;
  const u32 = (o: number) => (le ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const linktype = u32(20) & 0xffff;
  const packets: CapturedPacket[] = [];
  for (let o = 24; o + 16 <= buf.length;) {
    const sec = u32(o);
    const frac = u32(o + 4);
    const incl = u32(o + 8);
    const orig = u32(o + 12);
    const data = buf.subarray(o + 16, o + 16 + incl);
    o += 16 + incl;
    const tcp = tcpOf(data, linktype);
    packets.push({
      tsMicros: BigInt(sec) * 1_000_000n + BigInt(nano ? Math.floor(frac / 1000) : frac),
      sport: tcp?.sport ?? 0,
      dport: tcp?.dport ?? 0,
      flags: tcp?.flags ?? '',
      data: Buffer.from(data),
      origLen: orig,
    });
  }
  return { linktype, packets };
}

function tcpOf(d: Buffer, linktype: number): { sport: number; dport: number; flags: string } | undefined {
  let off = 0;
  let ethertype: number;
  if (linktype === 1) {
    if (d.length < 14) return undefined;
    ethertype = d.readUInt16BE(12);
    off = 14;
    if (ethertype === 0x8100 && d.length >= 18) {
      ethertype = d.readUInt16BE(16);
      off = 18;
    }
  } else if (linktype === 101 || linktype === 12) ethertype = d[0]! >> 4 === 6 ? 0x86dd : 0x0800;
  else return undefined;
  let proto: number;
  if (ethertype === 0x0800) {
    proto = d[off + 9]!;
    off += (d[off]! & 0x0f) * 4;
  } else if (ethertype === 0x86dd) {
    proto = d[off + 6]!;
    off += 40;
  } else return undefined;
  // a UDP flow (a DNS path's query) is matched by its ports, which sit where TCP's do
  if (proto === 17 && d.length >= off + 8) return { sport: d.readUInt16BE(off), dport: d.readUInt16BE(off + 2), flags: 'udp' };
  if (proto !== 6 || d.length < off + 14) return undefined;
  const f = d[off + 13]!;
  const flags = `${f & 0x02 ? 'S' : ''}${f & 0x01 ? 'F' : ''}${f & 0x04 ? 'R' : ''}${f & 0x08 ? 'P' : ''}${f & 0x10 ? '.' : ''}`;
  return { sport: d.readUInt16BE(off), dport: d.readUInt16BE(off + 2), flags };
}

/** one pcapng: a section header, an interface description per hop (named "<netns>/<interface>"), every packet */
export function writePcapng(captures: HopCapture[]): Buffer {
  const blocks: Buffer[] = [];
  const block = (type: number, body: Buffer) => {
    const pad = (4 - (body.length % 4)) % 4;
    const len = 12 + body.length + pad;
    const b = Buffer.alloc(len);
    b.writeUInt32LE(type, 0);
    b.writeUInt32LE(len, 4);
    body.copy(b, 8);
    b.writeUInt32LE(len, len - 4);
    blocks.push(b);
  };
  const option = (code: number, value: Buffer) => {
    const pad = (4 - (value.length % 4)) % 4;
    const b = Buffer.alloc(4 + value.length + pad);
    b.writeUInt16LE(code, 0);
    b.writeUInt16LE(value.length, 2);
    value.copy(b, 4);
    return b;
  };
  const endOfOptions = Buffer.alloc(4);
  // section header: byte-order magic, version 1.0, section length unknown (-1)
  const shb = Buffer.alloc(16);
  shb.writeUInt32LE(0x1a2b3c4d, 0);
  shb.writeUInt16LE(1, 4);
  shb.writeUInt16LE(0, 6);
  shb.writeBigInt64LE(-1n, 8);
  block(0x0a0d0d0a, Buffer.concat([shb, option(4, Buffer.from('Podscope probe --trace')), endOfOptions]));
  captures.forEach((c) => {
    const idb = Buffer.alloc(8);
    idb.writeUInt16LE(c.linktype, 0);
    idb.writeUInt32LE(CAPTURE_SNAPLEN, 4);
    const name = `${c.hop.netns === 'host' ? 'host' : c.hop.netns.slice(0, 12)}/${c.hop.interface}`;
    block(1, Buffer.concat([idb, option(2, Buffer.from(name)), option(3, Buffer.from(c.hop.label)), endOfOptions]));
  });
  const all = captures.flatMap((c, i) => c.packets.map((p) => ({ p, i })));
  all.sort((a, b) => (a.p.tsMicros < b.p.tsMicros ? -1 : a.p.tsMicros > b.p.tsMicros ? 1 : 0));
  for (const { p, i } of all) {
    const h = Buffer.alloc(20);
    h.writeUInt32LE(i, 0);
    h.writeUInt32LE(Number(p.tsMicros >> 32n), 4);
    h.writeUInt32LE(Number(p.tsMicros & 0xffffffffn), 8);
    h.writeUInt32LE(p.data.length, 12);
    h.writeUInt32LE(p.origLen, 16);
    const pad = Buffer.alloc((4 - (p.data.length % 4)) % 4);
    block(6, Buffer.concat([h, p.data, pad]));
  }
  return Buffer.concat(blocks);
}

/** the block types of a pcapng and its interface count (a check that a file is what Wireshark will read) */
export function pcapngBlocks(buf: Buffer): { types: number[]; interfaces: string[] } {
  const types: number[] = [];
  const interfaces: string[] = [];
  for (let o = 0; o + 12 <= buf.length;) {
    const type = buf.readUInt32LE(o);
    const len = buf.readUInt32LE(o + 4);
    if (len < 12 || buf.readUInt32LE(o + len - 4) !== len) throw new Error(`pcapng block at ${o}: bad length ${len}`);
    types.push(type);
    if (type === 1) {
      // options after the 8 fixed bytes: the first is if_name
      let p = o + 16;
      while (p + 4 <= o + len - 4) {
        const code = buf.readUInt16LE(p);
        const l = buf.readUInt16LE(p + 2);
        if (code === 0) break;
        if (code === 2) interfaces.push(buf.toString('utf8', p + 4, p + 4 + l));
        p += 4 + l + ((4 - (l % 4)) % 4);
      }
    }
    o += len;
  }
  return { types, interfaces };
}

/**
 * the host-side veth of a pod's eth0 (by the peer ifindex, never by name) and the bridge it is a port of, read through
 * the engine's one kernel reader; a read that fails leaves the hops it could not name out (nothing to capture there)
 */
export async function podHops(
  kernel: KernelReader,
  netns: { key: string; path: string; label: string; parent?: { key: string; path?: string; label: string } },
): Promise<{ eth0: Hop; veth?: Hop; bridge?: Hop }> {
  const eth0: Hop = { netns: netns.key, netnsPath: netns.path, interface: 'eth0', label: `eth0 in ${netns.label}` };
  const timeoutMs = 5000;
  const pod = await kernel.read(netns.path, { links: true }, { timeoutMs }).catch(() => undefined);
  const peer = pod?.links.find((l) => l.name === 'eth0')?.peerIfindex;
  if (peer === undefined) return { eth0 };
  // a pod of another node on this machine has its veth peer and bridge in that node's netns
  const parent = netns.parent ?? { key: 'host', label: 'the host' };
  const host = await kernel.read(parent.path, { links: true }, { timeoutMs }).catch(() => undefined);
  const v = host?.links.find((l) => l.ifindex === peer);
  if (!v) return { eth0 };
  const at = { netns: parent.key, ...(parent.path !== undefined && { netnsPath: parent.path }) };
  const out: { eth0: Hop; veth?: Hop; bridge?: Hop } = {
    eth0,
    veth: { ...at, interface: v.name, label: `host veth of ${netns.label}` },
  };
  if (v.master) out.bridge = { ...at, interface: v.master, label: `bridge ${v.master}${parent.path ? ` in ${parent.label}` : ''}` };
  return out;
}

/** tcpdump on one hop, writing a pcap file; stop() ends it by pid and reads what it captured */
class HopCapturer {
  private err = '';
  private exited: Promise<void>;
  private ready: Promise<void>;

  constructor(
    readonly hop: Hop,
    private readonly file: string,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((r) => {
      child.once('exit', () => r());
      child.once('error', (e) => {
        this.err += e.message;
        r();
      });
    });
    // tcpdump says "listening on <if>" once its socket is open: packets after that are captured
    this.ready = new Promise((r) => {
      child.stderr!.on('data', (b: Buffer) => {
        this.err = (this.err + b.toString('utf8')).slice(-2000);
        if (this.err.includes('listening on')) r();
      });
      void this.exited.then(() => r());
      setTimeout(r, 3000);
    });
  }

  /**
   * --immediate-mode: without it libpcap hands packets over a ring block at a time (or after a 1 s timeout), and the
   * packets of a block not yet handed over when tcpdump is stopped are lost: a fast probe would show none
   */
  static start(hop: Hop, dir: string, ports: number[]): HopCapturer {
    const file = join(dir, `${hop.netns.slice(0, 12)}-${hop.interface}.pcap`);
    const filter = `(tcp or udp) and (${ports.map((p) => `port ${p}`).join(' or ')})`;
    const args = [
      '-i',
      hop.interface,
      '-n',
      '-U',
      '--immediate-mode',
      '-s',
      String(CAPTURE_SNAPLEN),
      '-c',
      String(CAPTURE_MAX_PACKETS),
      '-w',
      file,
      filter,
    ];
    const [cmd, argv] = hop.netnsPath ? ['nsenter', [`--net=${hop.netnsPath}`, 'tcpdump', ...args]] : ['tcpdump', args];
    const child = spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    return new HopCapturer(hop, file, child);
  }

  whenReady(): Promise<void> {
    return this.ready;
  }

  async stop(): Promise<HopCapture> {
    if (this.child.exitCode === null && this.child.pid !== undefined) {
      try {
        process.kill(this.child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
      const t = setTimeout(() => {
        try {
          process.kill(this.child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 1000);
      await this.exited;
      clearTimeout(t);
    }
    const buf = await readFile(this.file).catch(() => undefined);
    if (!buf)
      return {
        hop: this.hop,
        linktype: 1,
        packets: [],
        error: `tcpdump on ${this.hop.interface}: ${this.err.trim().split('\n').pop() ?? 'no capture'}`,
      };
    return { hop: this.hop, ...parsePcap(buf) };
  }
}

/** captures on every hop at once, for the given source ports */
export class PathCapture {
  private constructor(
    private readonly dir: string,
    private readonly capturers: HopCapturer[],
  ) {}

  static async start(hops: Hop[], ports: number[]): Promise<PathCapture> {
    const dir = await mkdtemp(join(tmpdir(), 'podscope-capture-'));
    const capturers = hops.map((h) => HopCapturer.start(h, dir, ports));
    await Promise.all(capturers.map((c) => c.whenReady()));
    return new PathCapture(dir, capturers);
  }

  async stop(): Promise<HopCapture[]> {
    try {
      return await Promise.all(this.capturers.map((c) => c.stop()));
    } finally {
      await rm(this.dir, { recursive: true, force: true });
    }
  }
}
