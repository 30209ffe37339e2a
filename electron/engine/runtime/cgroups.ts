/**
 * Container resource usage from cgroup v1 (this machine kind is cgroups v1 hybrid, docs/semantics.md#machine-limits):
 * `memory/<path>/memory.usage_in_bytes`, `memory.stat`, `memory.oom_control` and `cpuacct/<path>/cpuacct.usage`,
 * where `<path>` is the OCI cgroupsPath runc used (cgroupfs driver). A cgroup v2 host reads the unified files.
 */
import { readFile, access } from 'node:fs/promises';
import { join } from 'node:path';

export interface CgroupUsage {
  cpuUsageNs?: bigint;
  memoryUsageBytes?: bigint;
  memoryWorkingSetBytes?: bigint;
  memoryRssBytes?: bigint;
  /** how many times the OOM killer killed a process of this cgroup (oom_kill in memory.oom_control / memory.events) */
  oomKills?: number;
}

export interface CgroupReader {
  usage(cgroupsPath: string): Promise<CgroupUsage>;
  /** the pids in the cgroup (cgroup.procs); undefined when it cannot be read. Optional: the runtime's direct kill */
  procs?(cgroupsPath: string): Promise<number[] | undefined>;
}

async function read(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

function keyed(text: string | undefined): Map<string, bigint> {
  const m = new Map<string, bigint>();
  for (const line of (text ?? '').split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v && /^\d+$/.test(v)) m.set(k, BigInt(v));
  }
  return m;
}

export class HostCgroupReader implements CgroupReader {
  constructor(private readonly root = '/sys/fs/cgroup') {}

  async usage(cgroupsPath: string): Promise<CgroupUsage> {
    const v1 = await access(join(this.root, 'memory')).then(
      () => true,
      () => false,
    );
    if (!v1) return this.usageV2(cgroupsPath);
    const mem = join(this.root, 'memory', cgroupsPath);
    const usage = await read(join(mem, 'memory.usage_in_bytes'));
    const stat = keyed(await read(join(mem, 'memory.stat')));
    const oom = keyed(await read(join(mem, 'memory.oom_control')));
    const cpu = await read(join(this.root, 'cpuacct', cgroupsPath, 'cpuacct.usage'));
    const out: CgroupUsage = {};
    if (cpu?.trim()) out.cpuUsageNs = BigInt(cpu.trim());
    if (usage?.trim()) {
      out.memoryUsageBytes = BigInt(usage.trim());
      const inactive = stat.get('total_inactive_file') ?? 0n;
      out.memoryWorkingSetBytes = out.memoryUsageBytes > inactive ? out.memoryUsageBytes - inactive : 0n;
    }
    const rss = stat.get('total_rss');
    if (rss !== undefined) out.memoryRssBytes = rss;
    const kills = oom.get('oom_kill');
    if (kills !== undefined) out.oomKills = Number(kills);
    return out;
  }

  async procs(cgroupsPath: string): Promise<number[] | undefined> {
    // v1: every controller holds the same tasks (runc puts the container in each); v2: the unified tree
    const text =
      (await read(join(this.root, 'memory', cgroupsPath, 'cgroup.procs'))) ?? (await read(join(this.root, cgroupsPath, 'cgroup.procs')));
    return text?.split('\n').filter(Boolean).map(Number);
  }

  private async usageV2(cgroupsPath: string): Promise<CgroupUsage> {
    const dir = join(this.root, cgroupsPath);
    const out: CgroupUsage = {};
    const cpu = keyed(await read(join(dir, 'cpu.stat')));
    const usec = cpu.get('usage_usec');
    if (usec !== undefined) out.cpuUsageNs = usec * 1000n;
    const current = await read(join(dir, 'memory.current'));
    const stat = keyed(await read(join(dir, 'memory.stat')));
    if (current?.trim()) {
      out.memoryUsageBytes = BigInt(current.trim());
      const inactive = stat.get('inactive_file') ?? 0n;
      out.memoryWorkingSetBytes = out.memoryUsageBytes > inactive ? out.memoryUsageBytes - inactive : 0n;
    }
    const anon = stat.get('anon');
    if (anon !== undefined) out.memoryRssBytes = anon;
    const kills = keyed(await read(join(dir, 'memory.events'))).get('oom_kill');
    if (kills !== undefined) out.oomKills = Number(kills);
    return out;
  }
}
