import type { EngineOptions } from '../electron/engine/common/options';

/** The CLI's engine flags for these options (the inverse of electron/core/engine-flags.ts), for tests that start a CLI or daemon. */
export function engineFlagsFor(o: Partial<EngineOptions>): string[] {
  const f: string[] = [];
  if (o.cniConfDir) f.push('--cni-conf-dir', o.cniConfDir);
  for (const d of o.cniBinDirs ?? []) f.push('--cni-bin-dir', d);
  if (o.cniCacheDir) f.push('--cni-cache-dir', o.cniCacheDir);
  if (o.stateDir) f.push('--state-dir', o.stateDir);
  if (o.runDir) f.push('--run-dir', o.runDir);
  if (o.netnsDir) f.push('--netns-dir', o.netnsDir);
  if (o.maxConfNum !== undefined) f.push('--max-conf-num', String(o.maxConfNum));
  if (o.ipPreference) f.push('--ip-pref', o.ipPreference);
  if (o.pluginTimeoutMs !== undefined) f.push('--plugin-timeout', String(o.pluginTimeoutMs));
  if (o.resolvConf) f.push('--resolv-conf', o.resolvConf);
  return f;
}
