/**
 * The engine flags every door that hosts an engine accepts: the CLI commands, `podscope serve`, and the Electron
 * main (`npm start -- --state-dir …`). One definition, so `npm start` and the CLI cannot disagree.
 */
import type { ParseArgsConfig } from 'node:util';
import { IP_PREFERENCES, type IpPreference } from '../../shared/domain/config';
import { PodscopeError } from '../../shared/domain/errors';
import { parseRegistryMirror, type EngineOptions } from '../engine/api';

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
  'insecure-registry': { type: 'string', multiple: true },
  'registry-mirror': { type: 'string', multiple: true },
} as const satisfies ParseArgsConfig['options'];

export type Flags = Record<string, string | boolean | string[] | undefined>;

export function engineOptionsFromFlags(flags: Flags): Partial<EngineOptions> {
  const o: Partial<EngineOptions> = {};
  const str = (k: string) => (typeof flags[k] === 'string' ? (flags[k] as string) : undefined);
  if (str('cni-conf-dir')) o.cniConfDir = str('cni-conf-dir');
  if (Array.isArray(flags['cni-bin-dir'])) o.cniBinDirs = flags['cni-bin-dir'];
  if (str('cni-cache-dir')) o.cniCacheDir = str('cni-cache-dir');
  if (str('state-dir')) o.stateDir = str('state-dir');
  if (str('run-dir')) o.runDir = str('run-dir');
  if (str('netns-dir')) o.netnsDir = str('netns-dir');
  if (str('seccomp-profile-root')) o.seccompProfileRoot = str('seccomp-profile-root');
  if (Array.isArray(flags['insecure-registry'])) o.insecureRegistries = flags['insecure-registry'];
  if (Array.isArray(flags['registry-mirror'])) o.registryMirrors = Object.fromEntries(flags['registry-mirror'].map(parseRegistryMirror));
  const pref = str('ip-pref');
  if (pref !== undefined) {
    if (!(IP_PREFERENCES as readonly string[]).includes(pref))
      throw new PodscopeError('InvalidArgument', `--ip-pref must be one of ${IP_PREFERENCES.join(', ')}, not ${JSON.stringify(pref)}`);
    o.ipPreference = pref as IpPreference;
  }
  if (flags['probe-on-ready'] === true && flags['no-probe-on-ready'] === true)
    throw new PodscopeError('InvalidArgument', '--probe-on-ready and --no-probe-on-ready contradict each other');
  if (flags['probe-on-ready'] === true) o.probeOnReady = true;
  if (flags['no-probe-on-ready'] === true) o.probeOnReady = false;
  const max = str('max-conf-num');
  if (max !== undefined) o.maxConfNum = nonNegativeInt('--max-conf-num', max);
  const timeout = str('plugin-timeout');
  if (timeout !== undefined) o.pluginTimeoutMs = nonNegativeInt('--plugin-timeout (ms)', timeout);
  const netfilter = str('max-netfilter-plugins');
  if (netfilter !== undefined) o.maxNetfilterPluginExecs = nonNegativeInt('--max-netfilter-plugins', netfilter);
  return o;
}

function nonNegativeInt(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0)
    throw new PodscopeError('InvalidArgument', `${flag} must be a non-negative integer, not ${JSON.stringify(text)}`);
  return n;
}

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
  --insecure-registry HOST[:PORT]  pull from this registry over plain HTTP, repeatable (loopback ones always are)
  --registry-mirror HOST=URL  pull HOST's images from URL instead (names kept), repeatable: docker.io=http://127.0.0.1:5000
  --endpoint unix:///PATH  talk to a CRI runtime (podscope cri, containerd, CRI-O) instead of hosting an engine`;
