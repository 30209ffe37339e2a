/**
 * The engine flags every door that hosts an engine accepts: the CLI commands, `podscope serve`, and the Electron
 * main (`npm start -- --state-dir …`). One definition, so `npm start` and the CLI cannot disagree.
 */
import { IP_PREFERENCES, type IpPreference } from '../../shared/domain/config';
import { PodscopeError } from '../../shared/domain/errors';
import { parseRegistryMirror, type EngineOptions } from '../engine/api';
import type { Flags } from './engine-flag-table';

// the table and its help text stay light (no engine, no zod): the CLI's entry reads them before choosing a verb
export { ENGINE_FLAGS_HELP, ENGINE_OPTION_FLAGS, type Flags } from './engine-flag-table';

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
  if (str('resolv-conf')) o.resolvConf = str('resolv-conf');
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
