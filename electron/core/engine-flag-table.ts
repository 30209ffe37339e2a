/** The engine flags' names, types and help: what the CLI's entry needs before it loads any verb (nothing heavy here). */
import type { ParseArgsConfig } from 'node:util';

export const ENGINE_OPTION_FLAGS = {
  'cni-conf-dir': { type: 'string' },
  'cni-bin-dir': { type: 'string', multiple: true },
  'cni-cache-dir': { type: 'string' },
  'state-dir': { type: 'string' },
  'run-dir': { type: 'string' },
  'netns-dir': { type: 'string' },
  'max-conf-num': { type: 'string' },
  'ip-pref': { type: 'string' },
  'plugin-timeout': { type: 'string' },
  'max-netfilter-plugins': { type: 'string' },
  'no-probe-on-ready': { type: 'boolean' },
  'probe-on-ready': { type: 'boolean' },
  'seccomp-profile-root': { type: 'string' },
  'resolv-conf': { type: 'string' },
  'insecure-registry': { type: 'string', multiple: true },
  'registry-mirror': { type: 'string', multiple: true },
} as const satisfies ParseArgsConfig['options'];

export type Flags = Record<string, string | boolean | string[] | undefined>;

export const ENGINE_FLAGS_HELP = `Engine flags:
  --cni-conf-dir DIR     CNI network configs (default /etc/cni/net.d)
  --cni-bin-dir DIR      CNI plugin dir, repeatable, searched in order (default /opt/cni/bin, /usr/lib/cni)
  --cni-cache-dir DIR    libcni result cache (default /var/lib/cni)
  --state-dir DIR        persistent state (default /var/lib/podscope)
  --run-dir DIR          runtime state, runc root, shm (default /run/podscope)
  --netns-dir DIR        where network namespaces are pinned (default /var/run/netns)
  --max-conf-num N       conf-dir networks to attach: eth0, eth1… (default 1, 0 = all)
  --ip-pref ipv4|ipv6|cni  primary pod IP preference (default ipv4)
  --plugin-timeout MS    timeout of one CNI plugin exec (default 60000)
  --max-netfilter-plugins N  portmap/firewall execs at once across all pods (default 4, 0 = no bound)
  --no-probe-on-ready    do not measure reachability right after each sandbox becomes ready
  --probe-on-ready       do measure it (the default, except under podscope cri, where no client could read it)
  --seccomp-profile-root DIR  where relative localhost/<profile> seccomp refs live (default <state-dir>/seccomp)
  --resolv-conf FILE     copied into a pod without dns_config, as kubelet's --resolv-conf; its nameservers are the
                         pod's DNS paths (default $PODSCOPE_RESOLV_CONF, else /etc/resolv.conf)
  --insecure-registry HOST[:PORT]  pull from this registry over plain HTTP, repeatable (loopback ones always are)
  --registry-mirror HOST=URL  pull HOST's images from URL instead (names kept), repeatable: docker.io=http://127.0.0.1:5000
  --endpoint unix:///PATH  talk to a CRI runtime (podscope cri, containerd, CRI-O) instead of hosting an engine; the
                         measuring verbs (probe, topology, inspectp --live, throughput, cnicheck) still measure here,
                         read-only, on the pod the runtime describes (README: what a measurement touches)
  --endpoint-cni-cache DIR  libcni's cache dir of the endpoint's runtime (default /var/lib/cni; results under DIR/results)`;
