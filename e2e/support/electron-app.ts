/**
 * The Electron side of the switch: where an Electron binary and a display exist, launch dist/electron/main.js with
 * the same isolated engine options as engine flags (what `npm start -- --state-dir …` passes) and hand the specs its first window. Here the binary
 * cannot be downloaded, so `electronAvailable()` is false and the electron target skips.
 */
import { fileURLToPath } from 'node:url';
import { _electron, type ElectronApplication, type Page } from '@playwright/test';
import type { EngineOptions } from '../../electron/engine/options';
import { electronBinary } from '../../bin/electron-binary.mjs';

export { electronBinary };

export const electronAvailable = () => !!electronBinary() && !!(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);

export async function launchElectron(options: Partial<EngineOptions>): Promise<{ app: ElectronApplication; page: Page }> {
  const main = fileURLToPath(new URL('../../dist/electron/main.js', import.meta.url));
  const app = await _electron.launch({
    executablePath: electronBinary(),
    args: [main, '--allow-root', ...engineFlags(options)],
  });
  return { app, page: await app.firstWindow() };
}

/** The CLI's engine flags for these options (the inverse of electron/core/engine-flags.ts). */
export function engineFlags(o: Partial<EngineOptions>): string[] {
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
  return f;
}
