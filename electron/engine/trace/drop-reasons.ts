/**
 * Where the kernel freed a packet and why: the `skb:kfree_skb` tracepoint (fields skbaddr, location, rx_sk, protocol,
 * reason) recorded in a tracefs instance of the trace's own (`instances/podscope-trace-<pid>-<n>`), so traces that
 * run at once, and other users of tracefs, never see each other's events. The event is filtered on the IP protocols
 * and on reasons other than NOT_SPECIFIED (the numbers come from the event's `format` file: they differ between
 * kernels). The event carries no address, so what it records is every IP packet the kernel dropped while the trace
 * ran, anywhere on the machine; the steps say so. The instance is removed when the trace ends, and a start-up sweep
 * removes those an engine that was killed left (their name carries its pid).
 */
import { mkdir, readdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessRunner } from '../os/exec';

export const TRACEFS = '/sys/kernel/tracing';
const INSTANCE_PREFIX = 'podscope-trace-';
const ETH_P_IP = 0x0800;
const ETH_P_IPV6 = 0x86dd;

export interface KernelDrop {
  family: 4 | 6;
  /** the kernel function (symbol+offset) that freed the packet */
  location: string;
  /** the skb_drop_reason name (IP_RPFILTER, NETFILTER_DROP, QDISC_DROP, …) */
  reason: string;
  /** how many packets were freed there for this reason */
  count: number;
}

/** `{ 16, "IP_RPFILTER" }` pairs of the event's print fmt: the kernel's own numbering of skb_drop_reason */
export function parseDropReasons(format: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of format.matchAll(/\{\s*(\d+),\s*"([A-Z0-9_]+)"\s*\}/g)) out.set(m[2]!, Number(m[1]));
  return out;
}

/** `… kfree_skb: skbaddr=… rx_sk=… protocol=2048 location=ip_rcv_finish_core+0x1a/0x… reason: IP_RPFILTER` lines, grouped */
export function parseKfreeSkb(text: string): KernelDrop[] {
  const groups = new Map<string, KernelDrop>();
  for (const line of text.split('\n')) {
    const m = /kfree_skb:.*\bprotocol=(\d+)\s+location=(\S+)\s+reason:\s*(\S+)/.exec(line);
    if (!m) continue;
    const proto = Number(m[1]);
    if (proto !== ETH_P_IP && proto !== ETH_P_IPV6) continue;
    const family = proto === ETH_P_IP ? 4 : 6;
    // "ip_rcv_finish_core+0x1a/0x3c0 [module]" → the function and offset
    const location = m[2]!.replace(/\/0x[0-9a-f]+$/, '');
    const key = `${family}/${location}/${m[3]}`;
    const g = groups.get(key) ?? { family, location, reason: m[3]!, count: 0 };
    g.count++;
    groups.set(key, g);
  }
  return [...groups.values()];
}

/** reasons that belong to a socket at the end of a path, not to the path (a RST to a closed port, a full queue) */
export function isSocketReason(reason: string): boolean {
  return /^(NO_SOCKET|SOCKET_|TCP_|UNIX_|PROTO_MEM)/.test(reason);
}

let seq = 0;

export class DropRecorder {
  private constructor(private readonly dir: string) {}

  /**
   * tracefs mounted (mounted here when it is not: it stays mounted, as the kernel's own interface), a fresh instance
   * with kfree_skb enabled and filtered; throws with a sentence saying what is missing
   */
  static async start(runner: ProcessRunner): Promise<DropRecorder> {
    if (!(await exists(join(TRACEFS, 'instances')))) {
      const r = await runner.run({ file: 'mount', args: ['-t', 'tracefs', 'nodev', TRACEFS], timeoutMs: 5000 }).catch((e: Error) => ({
        exitCode: 1,
        stderr: e.message,
        stdout: '',
      }));
      if (r.exitCode !== 0 || !(await exists(join(TRACEFS, 'instances'))))
        throw new Error(
          `tracefs is not mounted at ${TRACEFS} and could not be mounted (${r.stderr.trim() || `exit ${String(r.exitCode)}`})`,
        );
    }
    const format = await readFile(join(TRACEFS, 'events/skb/kfree_skb/format'), 'utf8').catch(() => undefined);
    if (format === undefined) throw new Error('this kernel has no skb:kfree_skb tracepoint');
    const reasons = parseDropReasons(format);
    const dir = join(TRACEFS, 'instances', `${INSTANCE_PREFIX}${process.pid}-${++seq}`);
    await mkdir(dir);
    const rec = new DropRecorder(dir);
    try {
      const event = join(dir, 'events/skb/kfree_skb');
      const notSpecified = reasons.get('NOT_SPECIFIED');
      const filter = `(protocol == ${ETH_P_IP} || protocol == ${ETH_P_IPV6})${notSpecified !== undefined ? ` && reason != ${notSpecified}` : ''}`;
      await writeFile(join(event, 'filter'), filter);
      await writeFile(join(event, 'enable'), '1');
    } catch (e) {
      await rec.stop().catch(() => undefined);
      throw new Error(`could not enable skb:kfree_skb in a tracefs instance: ${(e as Error).message}`);
    }
    return rec;
  }

  /** disables the event, reads what it recorded and removes the instance */
  async stop(): Promise<KernelDrop[]> {
    await writeFile(join(this.dir, 'events/skb/kfree_skb/enable'), '0').catch(() => undefined);
    const text = await readFile(join(this.dir, 'trace'), 'utf8').catch(() => '');
    await rmdir(this.dir);
    return parseKfreeSkb(text);
  }
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/** start-up: removes the tracefs instances of Podscope engines that are no longer running */
export async function sweepDropInstances(alive: (pid: number) => boolean): Promise<Array<{ path: string; error?: string }>> {
  const base = join(TRACEFS, 'instances');
  const names = await readdir(base).catch(() => [] as string[]);
  const out: Array<{ path: string; error?: string }> = [];
  for (const n of names) {
    const m = new RegExp(`^${INSTANCE_PREFIX}(\\d+)-\\d+$`).exec(n);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    const path = join(base, n);
    try {
      await rmdir(path);
      out.push({ path });
    } catch (e) {
      out.push({ path, error: (e as Error).message });
    }
  }
  return out;
}
