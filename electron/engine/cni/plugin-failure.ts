/**
 * Why a plugin exec failed, phrased as libcni's RawExec.pluginErr: a plugin reports errors as JSON
 * `{code,msg,details}` (cniVersion optional) on stdout; with no stdout the stderr text or the exit status is all
 * there is. Timeouts and cancellation are ours (libcni has only a context), so they say so plainly.
 */
import type { ExecResult } from '../os/exec';
import { formatCniError } from './names';

export interface PluginFailure {
  /** the plugin's CNI error code when it printed one */
  code?: number;
  msg: string;
  details?: string;
  /** the error as a Go caller would print it */
  text: string;
}

function failure(msg: string, code?: number, details?: string): PluginFailure {
  return { code, msg, details, text: formatCniError({ msg, details }) };
}

/** Go's exec.ExitError text. */
function exitStatus(r: ExecResult): string {
  return r.signal ? `signal: ${signalName(r.signal)}` : `exit status ${r.exitCode}`;
}

function signalName(signal: NodeJS.Signals): string {
  return signal === 'SIGKILL' ? 'killed' : signal === 'SIGTERM' ? 'terminated' : signal.toLowerCase();
}

function parseErrorJson(stdout: string): PluginFailure | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { code, msg, details } = parsed as Record<string, unknown>;
  if (code !== undefined && typeof code !== 'number') return undefined;
  if (msg !== undefined && typeof msg !== 'string') return undefined;
  if (details !== undefined && typeof details !== 'string') return undefined;
  return failure(msg ?? '', code, details || undefined);
}

export function describeFailure(r: ExecResult, timeoutMs: number): PluginFailure {
  if (r.timedOut) return failure(`netplugin timed out after ${timeoutMs} ms and was killed`);
  if (r.canceled) return failure('netplugin was canceled and killed');
  if (r.stdout.length === 0) {
    return r.stderr.length === 0
      ? failure(`netplugin failed with no error message: ${exitStatus(r)}`)
      : failure(`netplugin failed: ${JSON.stringify(r.stderr)}: ${exitStatus(r)}`);
  }
  return (
    parseErrorJson(r.stdout) ??
    failure(`netplugin failed but error parsing its diagnostic message ${JSON.stringify(r.stdout)}: not a CNI error object`)
  );
}

/** A plugin that could not even be started (Go reports fork/exec errors through the same path). */
export function describeSpawnFailure(binary: string, e: unknown): PluginFailure {
  const cause = (e as { cause?: NodeJS.ErrnoException }).cause;
  const reason = cause?.code ?? (e as Error).message;
  return failure(`netplugin failed with no error message: fork/exec ${binary}: ${reason}`);
}

/**
 * What a plugin's error means for the person reading it: the link kinds a kernel may lack, the links a config field
 * names, and defects of released plugin versions. The plugin's own text is never replaced, only explained
 * (docs/semantics.md#plugin-errors).
 */
export interface FailureAdvice {
  /** a sentence naming what is missing, put before the plugin's own text */
  explanation?: string;
  /** a defect of the installed plugin release: a warning, not the network's failure */
  knownDefect?: KnownDefect;
}

export interface KnownDefect {
  /** the upstream issue or pull request */
  reference: string;
  explanation: string;
  /** the plugin release it was recognised in */
  version: string;
}

export interface FailureFacts {
  type: string;
  verb: string;
  /** the plugin's error message (msg) */
  msg: string;
  /** the plugin object as the plugin received it (its stdin), when it parses */
  conf?: Record<string, unknown>;
}

/** link kinds a plugin asks the kernel for, and the module that provides each */
const LINK_KIND_MODULE: Record<string, string> = {
  ipvlan: 'ipvlan',
  macvlan: 'macvlan',
  vlan: '8021q',
  vrf: 'vrf',
  dummy: 'dummy',
  bridge: 'bridge',
  veth: 'veth',
};

/** the config fields that name a host link, per plugin */
const LINK_FIELDS: Record<string, string[]> = {
  macvlan: ['master'],
  ipvlan: ['master'],
  vlan: ['master'],
  'host-device': ['device'],
};

/** Kernel capability and missing-link errors; undefined when the error needs no words of ours. */
export function explainFailure(f: FailureFacts): string | undefined {
  const kind = /failed to create (\w+)\b[^:]*: operation not supported/i.exec(f.msg)?.[1]?.toLowerCase();
  if (kind && LINK_KIND_MODULE[kind]) {
    return `this kernel has no ${kind} support: the ${LINK_KIND_MODULE[kind]} module is not loaded or not built`;
  }
  if (/operation not supported/i.test(f.msg) && (f.type === 'vrf' || f.type === 'dummy')) {
    return `this kernel has no ${f.type} support: the ${f.type} module is not loaded or not built`;
  }
  if (/link not found/i.test(f.msg) && (f.verb === 'ADD' || f.verb === 'CHECK')) {
    for (const field of LINK_FIELDS[f.type] ?? []) {
      const name = f.conf?.[field];
      if (typeof name === 'string' && name !== '')
        return `link ${JSON.stringify(name)} (${f.type}'s ${JSON.stringify(field)}) does not exist in the host network namespace`;
    }
  }
  return undefined;
}

/** `major.minor.patch` compared; undefined when either is not one */
function releaseAtMost(version: string, max: string): boolean {
  const parse = (v: string) => /^(\d+)\.(\d+)\.(\d+)$/.exec(v)?.slice(1).map(Number);
  const a = parse(version);
  const b = parse(max);
  if (!a || !b) return false;
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return true;
}

interface DefectRule {
  type: string;
  verb: string;
  text: RegExp;
  /** the last release known to have it (verified on 1.1.1, Debian 12's) */
  through: string;
  /** further facts the failure must show: the plugin's stdin, and the message (to read what it looked for) */
  applies?: (conf: Record<string, unknown> | undefined, msg: string) => boolean;
  reference: string;
  explanation: string;
}

const prevIps = (conf: Record<string, unknown> | undefined): string[] => {
  const ips = (conf?.prevResult as { ips?: Array<{ address?: unknown }> } | undefined)?.ips ?? [];
  return ips.flatMap((ip) => (typeof ip.address === 'string' ? [ip.address] : []));
};

const DEFECTS: DefectRule[] = [
  {
    type: 'portmap',
    verb: 'CHECK',
    text: /^could not check ipv6 dnat: chain CNI-DN-\S+ not found in iptables table nat$/,
    through: '1.2.0',
    applies: (conf) => !prevIps(conf).some((a) => a.includes(':')),
    reference: 'https://github.com/containernetworking/plugins/issues/819',
    explanation:
      'portmap checks IPv6 DNAT rules even for a pod with no IPv6 address, for which ADD rightly created none: the IPv4 mappings were not what failed',
  },
  {
    // The same defect on a dual-stack pod: CHECK runs once per pod address and, before the fix in v1.3.0
    // ("Only check ipv6 when an IPv6 is configured"), looks for that address's rules in both iptables and ip6tables.
    // The IPv4 pass therefore looks for the IPv4 DNAT rules in ip6tables, where ADD rightly put the IPv6 ones only;
    // the message then lists the IPv4 rules it could not find there, and the IPv6 pass is never reached.
    type: 'portmap',
    verb: 'CHECK',
    text: /^could not check ipv6 dnat: rule \[.*\] in chain CNI-DN-\S+ not found in table nat$/s,
    through: '1.2.0',
    applies: (conf, msg) => {
      const ips = prevIps(conf).map((a) => a.split('/')[0]!);
      const v4 = ips.filter((a) => !a.includes(':'));
      return ips.some((a) => a.includes(':')) && v4.some((a) => msg.includes(`--to-destination ${a}:`));
    },
    reference: 'https://github.com/containernetworking/plugins/issues/819',
    explanation:
      "portmap (before 1.3.0) looks for the IPv4 DNAT rules of a dual-stack pod in ip6tables too, where ADD rightly made only the IPv6 ones: the IPv4 rules it names are in iptables, and the pod's mappings were not what failed",
  },
  {
    // bandwidth's CHECK reads the rates without asking whether any were given: a pod with no bandwidth (no
    // annotations, no static rates) makes it dereference nil and panic. Found on Debian's 1.1.1; fixed upstream in
    // v1.9.1 ("bandwidth: handle nil bandwidth in CHECK"). ADD and DEL of such a pod are fine: they return early.
    type: 'bandwidth',
    verb: 'CHECK',
    text: /^netplugin failed: "panic: runtime error: invalid memory address or nil pointer dereference.*main\.cmdCheck.*plugins\/meta\/bandwidth\/main\.go/s,
    through: '1.9.0',
    applies: (conf) => {
      const rc = conf?.runtimeConfig as { bandwidth?: unknown } | undefined;
      const own = ['ingressRate', 'ingressBurst', 'egressRate', 'egressBurst'].some((k) => conf?.[k] !== undefined);
      return rc?.bandwidth === undefined && !own;
    },
    reference: 'https://github.com/containernetworking/plugins/issues/1221',
    explanation:
      'bandwidth (before 1.9.1) panics in CHECK when the pod has no bandwidth limits, for which ADD rightly shaped nothing: there was nothing to check',
  },
  {
    type: 'ptp',
    verb: 'CHECK',
    text: /^Expected Route \{Dst:\{IP:\S+ Mask:[0-9a-f]+\} GW:<nil>\} not found in routing table$/,
    through: '1.2.0',
    reference: 'https://github.com/containernetworking/plugins/issues/886',
    explanation:
      'ptp installs every non-default route via its gateway, then its CHECK looks for the same route without one and fails although the route is there',
  },
  {
    // The same route check, shared by the plugins (pkg/ip's ValidateExpectedRoute, fixed for all of them by #887 in
    // v1.3.0): bridge's ADD installs an IPAM route without a gateway via the network's gateway (pkg/ipam fills it in),
    // and its CHECK looks for the route with no gateway. Seen on containerd's pods with host-local `routes:
    // [{dst: <range>}]` (a kindnet-style range route) on Debian's 1.1.1. Recognised only for a route the cached
    // result lists without a gateway: a route the result gives a gateway for, missing, is a real failure.
    type: 'bridge',
    verb: 'CHECK',
    text: /^Expected Route \{Dst:\{IP:\S+ Mask:[0-9a-f]+\} GW:<nil>\} not found in routing table$/,
    through: '1.2.0',
    applies: (conf, msg) => routeWithoutGateway(conf, msg),
    reference: 'https://github.com/containernetworking/plugins/issues/886',
    explanation:
      "bridge installs an IPAM route that has no gateway via the network's gateway, then its CHECK looks for the same route without one and fails although the route is there",
  },
];

/** The route the message names (`{Dst:{IP:a Mask:hex} GW:<nil>}`) is in the cached result with no gateway. */
function routeWithoutGateway(conf: Record<string, unknown> | undefined, msg: string): boolean {
  const m = /Dst:\{IP:(\S+) Mask:([0-9a-f]+)\}/.exec(msg);
  if (!m) return false;
  // Go prints a mask as hex bytes: ffff0000 is /16, and a v6 mask the same way over 16 bytes
  const bits = [...m[2]!].reduce((n, h) => n + (parseInt(h, 16).toString(2).match(/1/g)?.length ?? 0), 0);
  const routes = (conf?.prevResult as { routes?: Array<{ dst?: unknown; gw?: unknown }> } | undefined)?.routes ?? [];
  return routes.some((r) => r.gw === undefined && r.dst === `${m[1]}/${bits}`);
}

/** A rule whose plugin, verb and text match: the release still has to be looked up to confirm it. */
export function defectCandidate(f: FailureFacts): DefectRule | undefined {
  return DEFECTS.find((d) => d.type === f.type && d.verb === f.verb && d.text.test(f.msg) && (d.applies?.(f.conf, f.msg) ?? true));
}

/** The known defect, when the installed release is one that has it. */
export function knownDefect(f: FailureFacts, release: string | undefined): KnownDefect | undefined {
  const d = defectCandidate(f);
  if (!d || !release || !releaseAtMost(release, d.through)) return undefined;
  return { reference: d.reference, explanation: d.explanation, version: release };
}
