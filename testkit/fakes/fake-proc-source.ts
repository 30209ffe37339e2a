/**
 * A ProcSource over a described machine: processes with their namespaces, listening unix sockets (seen through their
 * netns, as /proc/<pid>/net/unix is) and open socket fds; files by path (a path through /proc/<pid>/root is written
 * out in full); each network namespace's addresses and routes; each UTS namespace's hostname.
 */
import type { IpAddress, IpRoute, NsKind, ProcSource, UnixListener } from '../../electron/endpoints/nodes/proc-source';

export interface FakeProcess {
  pid: number;
  comm: string;
  cmdline?: string[];
  ns: Record<NsKind, string>;
  /** the NSpid line's values, outermost first */
  nsPids?: number[];
  ppid?: number;
  /** inodes of its open sockets */
  fds?: number[];
}

export interface FakeMachine {
  self: Record<NsKind, string>;
  processes: FakeProcess[];
  /** listening unix sockets per network namespace id */
  unix?: Record<string, UnixListener[]>;
  files?: Record<string, string>;
  sockets?: string[];
  hostnames?: Record<string, string>;
  nets?: Record<string, { addresses: IpAddress[]; routes: IpRoute[] }>;
}

export function fakeProcSource(m: FakeMachine): ProcSource {
  const byPid = new Map(m.processes.map((p) => [p.pid, p]));
  const nsOf = (pid: number | 'self', kind: NsKind) => (pid === 'self' ? m.self[kind] : byPid.get(pid)?.ns[kind]);
  const net = (pid: number | 'self') => {
    const id = nsOf(pid, 'net');
    const n = id ? m.nets?.[id] : undefined;
    if (!n) throw new Error(`no network namespace for ${pid}`);
    return n;
  };
  return {
    pids: () => m.processes.map((p) => p.pid),
    comm: (pid) => byPid.get(pid)?.comm,
    cmdline: (pid) => byPid.get(pid)?.cmdline ?? [],
    ns: nsOf,
    status: (pid) => {
      const p = byPid.get(pid);
      return p ? `Name:\t${p.comm}\nPPid:\t${p.ppid ?? 0}\nNSpid:\t${(p.nsPids ?? [p.pid]).join('\t')}\n` : undefined;
    },
    unixListeners: (pid) => m.unix?.[nsOf(pid, 'net') ?? ''] ?? [],
    socketInodes: (pid) => new Set(byPid.get(pid)?.fds ?? []),
    readFile: (path) => m.files?.[path],
    listDir: (path) => {
      const prefix = `${path.replace(/\/$/, '')}/`;
      return [
        ...new Set(
          Object.keys(m.files ?? {})
            .filter((f) => f.startsWith(prefix))
            .map((f) => f.slice(prefix.length).split('/')[0]!),
        ),
      ];
    },
    isSocket: (path) => m.sockets?.includes(path) ?? false,
    hostname: async (pid) => m.hostnames?.[nsOf(pid, 'uts') ?? ''],
    addresses: async (pid) => net(pid).addresses,
    routes: async (pid) => net(pid).routes,
  };
}
