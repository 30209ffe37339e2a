#!/usr/bin/env node
/**
 * `npm start`: the Electron window where an Electron binary and a display exist, otherwise browser mode with the
 * default engine options, printing the URL (with its one-time token) to open. Electron as root is refused unless
 * --allow-root is passed (see electron/main/root-policy.ts); browser mode is the recommended way to run as root.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { electronBinary } from './electron-binary.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const forceBrowser = args.includes('--browser') || process.env.PODSCOPE_BROWSER === '1';

async function run(cmd, cmdArgs) {
  const child = spawn(cmd, cmdArgs, { stdio: 'inherit', cwd: root });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

async function ensureBuilt(withElectron) {
  if (!existsSync(`${root}dist/renderer/index.html`)) {
    const { build } = await import('vite');
    await build({ configFile: `${root}renderer/vite.config.ts`, logLevel: 'warn' });
  }
  if (withElectron && !existsSync(`${root}dist/electron/main.js`)) {
    if ((await run(process.execPath, [`${root}scripts/build-electron.mjs`])) !== 0) process.exit(1);
  }
}

const electron = electronBinary();
const display = !!(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);

if (electron && display && !forceBrowser) {
  await ensureBuilt(true);
  process.exit(await run(electron, [`${root}dist/electron/main.js`, ...args]));
} else {
  if (!forceBrowser) {
    console.error(electron ? 'podscope: no display found; starting browser mode.' : 'podscope: no Electron binary installed; starting browser mode.');
  }
  // The engine and host are TypeScript; tsx loads them without a separate build step.
  const { register } = await import('tsx/esm/api');
  register();
  const { startBrowserMode, untilSignal } = await import('../electron/host/serve.ts');
  // PODSCOPE_ENGINE_OPTIONS (JSON) points the engine at other directories, as for the Electron main.
  const engineOptions = process.env.PODSCOPE_ENGINE_OPTIONS ? JSON.parse(process.env.PODSCOPE_ENGINE_OPTIONS) : {};
  const portArg = args.find((a) => a.startsWith('--port='));
  const mode = await startBrowserMode({ engineOptions, port: portArg ? Number(portArg.slice(7)) : Number(process.env.PODSCOPE_PORT ?? 0) });
  if (mode.engineError) console.error(`podscope: the engine could not start: ${mode.engineError}`);
  console.log(`Podscope is running in browser mode. Open:\n\n  ${mode.url}\n\nThe token in the URL is required; keep it private. Ctrl-C to stop (sandboxes keep running).`);
  await untilSignal();
  await mode.close();
  process.exit(0);
}
