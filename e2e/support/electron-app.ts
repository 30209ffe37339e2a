/**
 * The Electron side of the switch: where an Electron binary and a display exist, launch dist/electron/main.js with
 * the same isolated engine options as engine flags (what `npm start -- --state-dir …` passes) and hand the specs its first window. Here the binary
 * cannot be downloaded, so `electronAvailable()` is false and the electron target skips.
 */
import { fileURLToPath } from 'node:url';
import { _electron, type ElectronApplication, type Page } from '@playwright/test';
import type { EngineOptions } from '../../electron/engine/common/options';
import { electronBinary } from '../../bin/electron-binary.mjs';
import { engineFlagsFor } from '../../testkit/engine-flags';

export { electronBinary };

export const electronAvailable = () => !!electronBinary() && !!(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);

export async function launchElectron(options: Partial<EngineOptions>): Promise<{ app: ElectronApplication; page: Page }> {
  const main = fileURLToPath(new URL('../../dist/electron/main.js', import.meta.url));
  const app = await _electron.launch({
    executablePath: electronBinary(),
    args: [main, '--allow-root', ...engineFlagsFor(options)],
  });
  return { app, page: await app.firstWindow() };
}
