/** Engine settings: every directory is configurable so tests and users can run beside other runtimes. */
import type { IpPreference } from '../../../shared/domain/config';

/**
 * portmap/firewall execs at once (cni/netfilter-gate.ts). Measured on 2 cores: 4 at once finishes a mass teardown as
 * fast as any higher figure, with a fraction of the retries.
 */
export const DEFAULT_MAX_NETFILTER_PLUGIN_EXECS = 4;

export interface EngineOptions {
  /** persistent state: store, per-sandbox files (default /var/lib/podscope) */
  stateDir: string;
  /** runtime state: runc root, shm mounts, bundles (default /run/podscope) */
  runDir: string;
  /** where network namespaces are pinned (default /var/run/netns) */
  netnsDir: string;
  cniConfDir: string;
  cniBinDirs: string[];
  /** libcni cache dir; results land in <cniCacheDir>/results (default /var/lib/cni) */
  cniCacheDir: string;
  /** how many conf-dir networks to attach (eth0, eth1, …); go-cni default 1 */
  maxConfNum: number;
  ipPreference: IpPreference;
  pluginTimeoutMs: number;
  /** portmap/firewall execs at once across every sandbox; 0 = no bound (docs/semantics.md#netfilter-plugins) */
  maxNetfilterPluginExecs: number;
  runcPath: string;
  /** the crun binary, for pods whose runtime_handler is `crun` (runtime/oci-runtime.ts) */
  crunPath: string;
  /** the conmon binary that watches each container (runtime/conmon.ts, docs/semantics.md#container-monitor) */
  conmonPath: string;
  /** measure reachability once right after each sandbox becomes ready (docs/semantics.md#reachability-probe) */
  probeOnReady: boolean;
  /** where relative `localhost/<profile>` seccomp refs are looked up; "" ⇒ `<stateDir>/seccomp` */
  seccompProfileRoot: string;
  /**
   * the resolv.conf copied into a pod whose config has no dns_config (kubelet's --resolv-conf); its nameservers are the
   * pod's DNS paths in the probe. Default: $PODSCOPE_RESOLV_CONF when set, else /etc/resolv.conf — the test suite
   * points it at a file with no nameserver, so that no probe of a test's pod sends a query off this host.
   */
  resolvConf: string;
  /** registries (host[:port]) pulled from over plain HTTP; localhost/127.0.0.1/::1 ones always are */
  insecureRegistries: string[];
  /** registry host ⇒ endpoint origin to pull its images from, names kept (`docker.io` ⇒ `http://127.0.0.1:5000`) */
  registryMirrors: Record<string, string>;
}

export const DEFAULT_ENGINE_OPTIONS: EngineOptions = {
  stateDir: '/var/lib/podscope',
  runDir: '/run/podscope',
  resolvConf: process.env.PODSCOPE_RESOLV_CONF || '/etc/resolv.conf',
  netnsDir: '/var/run/netns',
  cniConfDir: '/etc/cni/net.d',
  cniBinDirs: ['/opt/cni/bin', '/usr/lib/cni'],
  cniCacheDir: '/var/lib/cni',
  maxConfNum: 1,
  ipPreference: 'ipv4',
  pluginTimeoutMs: 60_000,
  maxNetfilterPluginExecs: DEFAULT_MAX_NETFILTER_PLUGIN_EXECS,
  runcPath: 'runc',
  crunPath: 'crun',
  conmonPath: 'conmon',
  probeOnReady: true,
  seccompProfileRoot: '',
  insecureRegistries: [],
  registryMirrors: {},
};

export function seccompProfileRoot(o: EngineOptions): string {
  return o.seccompProfileRoot || `${o.stateDir}/seccomp`;
}
