/**
 * What node discovery reads from the OS, as one small interface: /proc (processes, their namespaces, their listening
 * unix sockets), files through a process's root, and the two things that need entering a namespace (the hostname of
 * a UTS namespace, the addresses and routes of a network namespace). Real: `hostProcSource()`; fake:
 * testkit/fakes/fake-proc-source.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { promisify } from 'node:util';

export type NsKind = 'net' | 'mnt' | 'pid' | 'uts';

export interface UnixListener {
  inode: number;
  /** the bound path as the owning process sees it ("" for an unnamed socket, "@…" for an abstract one) */
  path: string;
}

export interface IpAddress {
  ifName: string;
  family: 'inet' | 'inet6';
  local: string;
  prefixLen: number;
  scope: string;
}

export interface IpRoute {
  dst: string;
  gateway?: string;
  dev?: string;
  protocol?: string;
  scope?: string;
}

export interface ProcSource {
  /** the pids in /proc */
  pids(): number[];
  comm(pid: number): string | undefined;
  cmdline(pid: number): string[];
  /** `net:[4026531840]`; undefined when the process is gone or unreadable */
  ns(pid: number | 'self', kind: NsKind): string | undefined;
  /** /proc/<pid>/status, for NSpid */
  status(pid: number): string | undefined;
  /** the listening unix sockets of the process's netns (/proc/<pid>/net/unix) */
  unixListeners(pid: number): UnixListener[];
  /** inodes of the sockets among the process's open fds */
  socketInodes(pid: number): Set<number>;
  /** a file's text, or undefined (a path through /proc/<pid>/root works) */
  readFile(path: string): string | undefined;
  listDir(path: string): string[];
  /** a unix socket exists at the path */
  isSocket(path: string): boolean;
  /** the hostname of the process's UTS namespace */
  hostname(pid: number | 'self'): Promise<string | undefined>;
  /** the addresses and routes of the process's network namespace */
  addresses(pid: number | 'self'): Promise<IpAddress[]>;
  routes(pid: number | 'self'): Promise<IpRoute[]>;
}

const run = promisify(execFile);

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** /proc/net/unix: "Num RefCount Protocol Flags Type St Inode Path"; a listener has __SO_ACCEPTCON (0x10000) */
export function parseNetUnix(text: string): UnixListener[] {
  const out: UnixListener[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 7) continue;
    if ((parseInt(f[3]!, 16) & 0x10000) === 0) continue;
    out.push({ inode: Number(f[6]), path: f.slice(7).join(' ') });
  }
  return out;
}

/** The real source: reads /proc, and enters namespaces with nsenter (Podscope runs as root). */
export function hostProcSource(): ProcSource {
  const inNs = async (pid: number | 'self', flag: string, file: string, args: string[]) => {
    const { stdout } = await run('nsenter', [`--${flag}=/proc/${pid}/ns/${flag === 'uts' ? 'uts' : 'net'}`, '--', file, ...args], {
      timeout: 5000,
    });
    return stdout;
  };
  return {
    pids: () =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .map(Number),
    comm: (pid) => read(`/proc/${pid}/comm`)?.trim(),
    cmdline: (pid) => (read(`/proc/${pid}/cmdline`) ?? '').split('\0').filter(Boolean),
    ns(pid, kind) {
      try {
        return readlinkSync(`/proc/${pid}/ns/${kind}`);
      } catch {
        return undefined;
      }
    },
    status: (pid) => read(`/proc/${pid}/status`),
    unixListeners: (pid) => parseNetUnix(read(`/proc/${pid}/net/unix`) ?? ''),
    socketInodes(pid) {
      const out = new Set<number>();
      let fds: string[] = [];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        return out;
      }
      for (const fd of fds) {
        try {
          const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
          if (m) out.add(Number(m[1]));
        } catch {
          /* closed meanwhile */
        }
      }
      return out;
    },
    readFile: read,
    listDir(path) {
      try {
        return readdirSync(path);
      } catch {
        return [];
      }
    },
    isSocket(path) {
      try {
        return existsSync(path) && statSync(path).isSocket();
      } catch {
        return false;
      }
    },
    async hostname(pid) {
      if (pid === 'self') return read('/proc/sys/kernel/hostname')?.trim();
      // the hostname file in /proc shows the reader's UTS namespace: read it from inside the process's
      return (await inNs(pid, 'uts', 'cat', ['/proc/sys/kernel/hostname']).catch(() => undefined))?.trim();
    },
    async addresses(pid) {
      const text = await inNs(pid, 'net', 'ip', ['-j', 'addr', 'show']);
      const links = JSON.parse(text) as Array<{
        ifname: string;
        addr_info?: Array<{ family: string; local: string; prefixlen: number; scope: string }>;
      }>;
      return links.flatMap((l) =>
        (l.addr_info ?? [])
          .filter((a) => a.family === 'inet' || a.family === 'inet6')
          .map((a) => ({ ifName: l.ifname, family: a.family as 'inet' | 'inet6', local: a.local, prefixLen: a.prefixlen, scope: a.scope })),
      );
    },
    async routes(pid) {
      const text = await inNs(pid, 'net', 'ip', ['-j', 'route', 'show']);
      return (JSON.parse(text) as Array<{ dst: string; gateway?: string; dev?: string; protocol?: string; scope?: string }>).map((r) => ({
        dst: r.dst,
        gateway: r.gateway,
        dev: r.dev,
        protocol: r.protocol,
        scope: r.scope,
      }));
    },
  };
}
